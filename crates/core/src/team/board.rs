//! The team's task board, `<team>/board.json`: items with a title, an owner, a status and the
//! items they are blocked by, kept both ways (`blocked_by` on the blocked item, `blocks` on its
//! blocker). Every change reads, changes and atomically replaces the file under the board's lock,
//! so the lead and its teammates (separate processes) change it one at a time.
//!
//! Rules: an item starts `open`; it can be taken (`in_progress`) or finished (`done`) only when
//! every item it is blocked by is `done`; an item `in_progress` for one member cannot be taken by
//! another; a dependency that would make a cycle is refused.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{TeamError, lock, store};

/// An item's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started.
    Open,
    /// Taken by its owner.
    InProgress,
    /// Finished.
    Done,
}

impl Status {
    /// Its name (`open`, `in_progress`, `done`).
    pub fn word(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::InProgress => "in_progress",
            Status::Done => "done",
        }
    }

    /// The status named `word`.
    pub fn parse(word: &str) -> Option<Status> {
        match word {
            "open" => Some(Status::Open),
            "in_progress" => Some(Status::InProgress),
            "done" => Some(Status::Done),
            _ => None,
        }
    }
}

/// One item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Its number (1, 2, …), never reused.
    pub id: u32,
    /// What it is.
    pub title: String,
    /// The member working on it (or meant to).
    #[serde(default)]
    pub owner: Option<String>,
    /// Its status.
    pub status: Status,
    /// Items that must be done before this one can start.
    #[serde(default)]
    pub blocked_by: Vec<u32>,
    /// Items waiting for this one (the other side of their `blocked_by`).
    #[serde(default)]
    pub blocks: Vec<u32>,
    /// The member that changed it last.
    #[serde(default)]
    pub updated_by: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct State {
    next_id: u32,
    items: Vec<Item>,
}

/// A change to an item (`None`: left as it is).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Change {
    /// A new title.
    pub title: Option<String>,
    /// A new status.
    pub status: Option<Status>,
    /// A new owner (`Some(None)` clears it).
    pub owner: Option<Option<String>>,
    /// The items it is blocked by, replacing the old list.
    pub blocked_by: Option<Vec<u32>>,
}

/// A team's board.
#[derive(Debug, Clone)]
pub struct Board {
    file: PathBuf,
}

impl Board {
    /// The board of the team folder `dir`.
    pub fn new(dir: &Path) -> Board {
        Board { file: dir.join("board.json") }
    }

    /// Every item, by number.
    pub fn list(&self) -> Result<Vec<Item>, TeamError> {
        Ok(store::read::<State>(&self.file)?.unwrap_or_default().items)
    }

    /// The item `id`.
    pub fn get(&self, id: u32) -> Result<Item, TeamError> {
        let items = self.list()?;
        items.iter().find(|item| item.id == id).cloned().ok_or_else(|| unknown(id, &items))
    }

    /// Adds an item by `by`, blocked by `blocked_by`; returns it.
    pub fn add(
        &self,
        by: &str,
        title: &str,
        owner: Option<String>,
        blocked_by: Vec<u32>,
    ) -> Result<Item, TeamError> {
        if title.trim().is_empty() {
            return Err(TeamError::Board("an item needs a title".into()));
        }
        self.change_state(|state| {
            for blocker in &blocked_by {
                item(state, *blocker)?;
            }
            state.next_id = state.next_id.max(1);
            let id = state.next_id;
            state.items.push(Item {
                id,
                title: title.trim().to_string(),
                owner: owner.clone(),
                status: Status::Open,
                blocked_by: Vec::new(),
                blocks: Vec::new(),
                updated_by: by.to_string(),
            });
            set_blockers(state, id, blocked_by.clone())?;
            state.next_id = id + 1;
            item(state, id)
        })
    }

    /// Applies `change` to item `id` for the member `by`; returns the item as it is now.
    pub fn update(&self, by: &str, id: u32, change: &Change) -> Result<Item, TeamError> {
        self.change_state(|state| {
            item(state, id)?;
            if let Some(blockers) = &change.blocked_by {
                set_blockers(state, id, blockers.clone())?;
            }
            let current = item(state, id)?;
            if let Some(status) = change.status.filter(|status| *status != Status::Open) {
                let waiting: Vec<String> = current
                    .blocked_by
                    .iter()
                    .filter_map(|blocker| state.items.iter().find(|item| item.id == *blocker))
                    .filter(|blocker| blocker.status != Status::Done)
                    .map(describe)
                    .collect();
                if !waiting.is_empty() {
                    return Err(TeamError::Board(format!(
                        "#{id} cannot be {}: it is blocked by {}",
                        if status == Status::Done { "done" } else { "taken" },
                        waiting.join(", ")
                    )));
                }
            }
            if change.status == Some(Status::InProgress)
                && current.status == Status::InProgress
                && let Some(holder) = current.owner.as_deref().filter(|holder| *holder != by)
                && change.owner.is_none()
            {
                return Err(TeamError::Board(format!("#{id} is already in progress, owned by `{holder}`")));
            }
            let Some(entry) = state.items.iter_mut().find(|item| item.id == id) else {
                return Err(TeamError::Board(format!("no item #{id}")));
            };
            if let Some(title) = change.title.as_deref().filter(|title| !title.trim().is_empty()) {
                entry.title = title.trim().to_string();
            }
            if let Some(status) = change.status {
                entry.status = status;
            }
            entry.owner = match (&change.owner, change.status) {
                (Some(owner), _) => owner.clone(),
                (None, Some(Status::InProgress)) if entry.owner.is_none() => Some(by.to_string()),
                (None, _) => entry.owner.clone(),
            };
            entry.updated_by = by.to_string();
            item(state, id)
        })
    }

    /// Runs `change` on the board as it is on disk, under its lock; the board is written back only
    /// when `change` succeeds (a refused change leaves it as it was).
    fn change_state<T>(
        &self,
        change: impl FnOnce(&mut State) -> Result<T, TeamError>,
    ) -> Result<T, TeamError> {
        let lock = self.file.with_extension("lock");
        lock::locked(&lock, || {
            let mut state = store::read::<State>(&self.file)?.unwrap_or_default();
            let out = change(&mut state)?;
            store::write(&self.file, &state)?;
            Ok(out)
        })
    }
}

/// One line about an item: `#2 "Write the parser" (in_progress, owner bob)`.
pub fn describe(item: &Item) -> String {
    let owner = item.owner.as_deref().map(|owner| format!(", owner {owner}")).unwrap_or_default();
    format!("#{} \"{}\" ({}{owner})", item.id, item.title, item.status.word())
}

fn item(state: &State, id: u32) -> Result<Item, TeamError> {
    state.items.iter().find(|item| item.id == id).cloned().ok_or_else(|| unknown(id, &state.items))
}

fn unknown(id: u32, items: &[Item]) -> TeamError {
    let ids: Vec<String> = items.iter().map(|item| format!("#{}", item.id)).collect();
    if ids.is_empty() {
        TeamError::Board(format!("no item #{id}: the board is empty"))
    } else {
        TeamError::Board(format!("no item #{id}; the items are {}", ids.join(", ")))
    }
}

/// Makes `blockers` the `blocked_by` of `id` and keeps every `blocks` list in step; refuses an
/// unknown item, the item itself and a cycle.
fn set_blockers(state: &mut State, id: u32, mut blockers: Vec<u32>) -> Result<(), TeamError> {
    blockers.sort_unstable();
    blockers.dedup();
    for blocker in &blockers {
        if *blocker == id {
            return Err(TeamError::Board(format!("#{id} cannot be blocked by itself")));
        }
        item(state, *blocker)?;
        if depends_on(state, *blocker, id) {
            return Err(TeamError::Board(format!(
                "#{id} cannot be blocked by #{blocker}: #{blocker} already waits for #{id} (a cycle)"
            )));
        }
    }
    for entry in &mut state.items {
        entry.blocks.retain(|blocked| *blocked != id);
        if blockers.contains(&entry.id) {
            entry.blocks.push(id);
            entry.blocks.sort_unstable();
        }
        if entry.id == id {
            entry.blocked_by = blockers.clone();
        }
    }
    Ok(())
}

/// Whether `from` waits, directly or through others, for `target`.
fn depends_on(state: &State, from: u32, target: u32) -> bool {
    let mut stack = vec![from];
    let mut seen = Vec::new();
    while let Some(next) = stack.pop() {
        if next == target {
            return true;
        }
        if seen.contains(&next) {
            continue;
        }
        seen.push(next);
        if let Some(entry) = state.items.iter().find(|item| item.id == next) {
            stack.extend(&entry.blocked_by);
        }
    }
    false
}
