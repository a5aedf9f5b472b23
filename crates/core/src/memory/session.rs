//! A session's memory: the scopes it reads, the entries loaded at start, the index the model is
//! given before the first user message, and recall per user turn (FEATURES.md §I).
//!
//! Loading happens once at start; the recall index is rebuilt after each write of the `memory`
//! tool. Recall is deterministic ([`super::recall`]) and cheap (well under 2 ms over 1 000
//! entries); the bookkeeping it updates (`use_count`, `last_used`) is written on a background
//! thread, so a user turn never waits for it. Nothing is written in read-only mode or to the
//! project-shared scope.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use chrono::Utc;
use lathe_protocol::memory::{MemoryRecall, RecalledEntry};
use lathe_protocol::{AssistantMessage, Content};
use serde::{Deserialize, Serialize};

use super::clean_lines::CleanLines;
use super::command::Source;
use super::entry::Entry;
use super::recall::RecallIndex;
use super::{Roots, Scope, entry, index, recall, secrets, stale, store};

/// How a recall block starts; `history::message_text` leaves such blocks out of a prompt's text.
pub const RECALL_PREFIX: &str = "<memory-recall>";

/// Whether a session uses memory (`--memory`, `[memory] mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryMode {
    /// Recall, and the `memory` tool with every command (writes go through the permission engine).
    #[default]
    On,
    /// Recall, and the `memory` tool with `view` only; nothing is ever written.
    ReadOnly,
    /// No index, no recall, no tool.
    Off,
}

/// A `--memory` value that is not a mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown memory mode `{0}` (expected on, read-only or off)")]
pub struct UnknownMemoryMode(pub String);

impl FromStr for MemoryMode {
    type Err = UnknownMemoryMode;

    fn from_str(text: &str) -> Result<MemoryMode, UnknownMemoryMode> {
        match text {
            "on" => Ok(MemoryMode::On),
            "read-only" | "readonly" => Ok(MemoryMode::ReadOnly),
            "off" => Ok(MemoryMode::Off),
            other => Err(UnknownMemoryMode(other.to_string())),
        }
    }
}

/// One session's memory, shared by the agent (index, recall) and the `memory` tool (writes).
#[derive(Debug)]
pub struct SessionMemory {
    roots: Roots,
    mode: MemoryMode,
    repo_root: Option<PathBuf>,
    session: Mutex<String>,
    turn: AtomicU32,
    state: Mutex<State>,
    /// The session's permission rules: entries a `Memory(…)` deny rule keeps from being read are
    /// left out of the index, recall and listings.
    policy: std::sync::OnceLock<Arc<lathe_policy::Policy>>,
    /// The lines of index and recall text already found free of secrets.
    clean: Mutex<CleanLines>,
    /// Lathe's cache folder (records of parsed entries and of clean lines).
    cache_dir: PathBuf,
}

#[derive(Debug)]
struct State {
    entries: Arc<Vec<Entry>>,
    /// The recall index; empty while `building` runs.
    index: RecallIndex,
    /// With many entries the recall index is built on its own thread while the session starts
    /// (the index text given to the model does not need it); the first recall waits for it.
    building: Option<std::thread::JoinHandle<RecallIndex>>,
    /// Evidence files changed since each project entry was written, by entry id (computed once).
    stale: HashMap<String, Vec<String>>,
}

/// Fewest entries whose recall index is built on its own thread.
const BUILD_APART: usize = 200;

impl State {
    fn new(entries: Vec<Entry>) -> State {
        let entries = Arc::new(entries);
        let (index, building) = if entries.len() < BUILD_APART {
            (RecallIndex::build(&entries), None)
        } else {
            let shared = entries.clone();
            (RecallIndex::default(), Some(std::thread::spawn(move || RecallIndex::build(&shared))))
        };
        State { entries, index, building, stale: HashMap::new() }
    }

    /// The recall index, waiting for its thread if it is still being built (a builder that
    /// panicked leaves the index empty: recall finds nothing, memory stays usable).
    fn index(&mut self) -> &RecallIndex {
        if let Some(handle) = self.building.take() {
            self.index = handle.join().unwrap_or_default();
        }
        &self.index
    }
}

impl SessionMemory {
    /// The memory of a session in `workspace` (Lathe's home `lathe_home`), loaded now; `None` when
    /// `mode` is off. The warnings name files loaded without their frontmatter, files refused for
    /// their size and folders that could not be read.
    pub fn open(
        lathe_home: &Path,
        workspace: &Path,
        mode: MemoryMode,
        session: &str,
    ) -> (Option<Arc<SessionMemory>>, Vec<String>) {
        if mode == MemoryMode::Off {
            return (None, Vec::new());
        }
        let roots = Roots::for_workspace(lathe_home, workspace);
        let cache_dir = lathe_home.join("cache");
        let loaded = store::load_cached(&roots, Some(&cache_dir));
        // The index and recall are redacted: lines known to be clean are not scanned again, and a
        // secret rule compiles only for text holding one of its words.
        let clean = CleanLines::load(&cache_dir);
        let mut warnings: Vec<String> =
            loaded.warnings.iter().map(|warning| format!("memory: {warning}")).collect();
        if mode == MemoryMode::On
            && let Some(problem) = unwritable(&roots)
        {
            warnings.push(format!("memory: {problem}; memories cannot be saved this session"));
        }
        let memory = SessionMemory {
            repo_root: repo_root(workspace),
            roots,
            mode,
            session: Mutex::new(session.to_string()),
            turn: AtomicU32::new(0),
            state: Mutex::new(State::new(loaded.entries)),
            policy: std::sync::OnceLock::new(),
            clean: Mutex::new(clean),
            cache_dir,
        };
        (Some(Arc::new(memory)), warnings)
    }

    /// The mode the session uses memory in.
    pub fn mode(&self) -> MemoryMode {
        self.mode
    }

    /// The scopes' folders.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// The repository root (for evidence paths), when the workspace is in one.
    pub fn repo_root(&self) -> Option<&Path> {
        self.repo_root.as_deref()
    }

    /// Who writes now: this session and its current user turn.
    pub fn source(&self) -> Source {
        let session = self.session.lock().map(|id| id.clone()).unwrap_or_default();
        Source { session, turn: self.turn.load(Ordering::Relaxed) }
    }

    /// Records the session's id (memory is opened before the session file, so the id may come
    /// later than [`SessionMemory::open`]).
    pub fn set_session(&self, session: &str) {
        if let Ok(mut id) = self.session.lock() {
            *id = session.to_string();
        }
    }

    /// Gives memory the session's permission rules (once; later calls are ignored).
    pub fn set_policy(&self, policy: Arc<lathe_policy::Policy>) {
        let _ = self.policy.set(policy);
    }

    /// Whether the entry at `rule_path` (`<scope>/<file>`) may be read: no `Memory(…)` deny rule
    /// covers it.
    pub fn readable(&self, rule_path: &str) -> bool {
        self.policy.get().is_none_or(|policy| {
            if !policy.denies_memory() {
                return true;
            }
            let access = lathe_tools::Access::Memory { path: rule_path.to_string(), write: false };
            policy.decide(super::MEMORY_TOOL, &access).verdict != lathe_policy::Verdict::Deny
        })
    }

    fn shown(&self, entry: &Entry, now: chrono::DateTime<Utc>) -> bool {
        // The entry's rule path is made only when some deny rule could cover it.
        !recall::is_expired(entry, now)
            && (self.policy.get().is_none_or(|policy| !policy.denies_memory())
                || self.readable(&format!("{}/{}", entry.scope, entry.file)))
    }

    /// [`secrets::redact_lines`] of `text`, through the record of lines known to be clean.
    fn redact_lines(&self, text: &str) -> String {
        let Ok(mut clean) = self.clean.lock() else { return secrets::redact_lines(text) };
        let redacted = clean.redact_lines(text);
        clean.save();
        redacted
    }

    /// `text` with the scopes' real folders replaced by their virtual paths (`/memories/user`),
    /// so an error shown to the model names no real path.
    pub fn virtualize(&self, text: &str) -> String {
        let mut text = text.to_string();
        for scope in Scope::ALL {
            let Some(root) = self.roots.root(scope) else { continue };
            let real = root.canonicalize().ok();
            for form in real.iter().map(|path| path.as_path()).chain([root]) {
                let form = form.display().to_string();
                if !form.is_empty() {
                    text = text.replace(&form, &format!("/memories/{scope}"));
                }
            }
        }
        text
    }

    /// Records the current user turn (1-based), for the `source` of entries written in it.
    pub fn set_turn(&self, turn: u32) {
        self.turn.store(turn, Ordering::Relaxed);
    }

    /// Loads the entries again and rebuilds the recall index (after a write).
    pub fn reload(&self) {
        let loaded = store::load_cached(&self.roots, Some(&self.cache_dir));
        if let Ok(mut state) = self.state.lock() {
            *state = State::new(loaded.entries);
        }
    }

    /// The entries as loaded, in scope and file order.
    pub fn entries(&self) -> Vec<Entry> {
        self.state.lock().map(|state| state.entries.to_vec()).unwrap_or_default()
    }

    /// The index of every scope with entries, as the model gets it before the first user message
    /// (outside the byte-stable system prompt); empty when there are no entries. An entry whose
    /// evidence changed is marked possibly stale; expired entries and entries a deny rule keeps
    /// from being read are left out. Each scope's part holds at most [`super::MAX_INDEX_LINES`]
    /// lines and [`super::MAX_INDEX_BYTES`] bytes (a committed shared index can be longer than
    /// Lathe lets its own grow): the rest is counted in a line saying how to list it.
    pub fn index_context(&self) -> String {
        let Ok(mut state) = self.state.lock() else { return String::new() };
        let now = Utc::now();
        let shown: Vec<bool> = state.entries.iter().map(|entry| self.shown(entry, now)).collect();
        if !shown.contains(&true) {
            return String::new();
        }
        let mut text = String::from(
            "<memory-index>\nLong-term memory saved in earlier sessions (view an entry with the memory tool; \
             relevant entries are attached to the user's messages):\n",
        );
        for scope in [Scope::User, Scope::Project, Scope::Shared] {
            let entries: Vec<&Entry> = state
                .entries
                .iter()
                .zip(&shown)
                .filter(|(entry, shown)| **shown && entry.scope == scope)
                .map(|(entry, _)| entry)
                .collect();
            if !entries.is_empty() {
                text.push_str(&capped(scope, &entries));
            }
        }
        let stale: Vec<String> = (0..state.entries.len())
            .filter(|&at| shown[at])
            .filter_map(|at| {
                let changed = stale_of(&mut state, self.repo_root.as_deref(), at);
                (!changed.is_empty()).then(|| {
                    let id = super::clean_line(&state.entries[at].id());
                    super::clean_line(&format!("{id} is possibly stale ({} changed)", changed.join(", ")))
                })
            })
            .collect();
        for line in stale {
            text.push_str(&format!("Note: {line}\n"));
        }
        text.push_str("</memory-index>\n");
        // A memory file written by hand (or committed) may hold a secret the tool would refuse.
        self.redact_lines(&text)
    }

    /// The entries relevant to `prompt` in user turn `turn`: the block to attach to the user's
    /// message ([`RECALL_PREFIX`] … `</memory-recall>`) and the record for the ledger; `None` when
    /// nothing is relevant. Updates the entries' `use_count` and `last_used` in the background.
    pub fn recall(&self, prompt: &str, turn: u32) -> Option<(String, MemoryRecall)> {
        let mut state = self.state.lock().ok()?;
        let now = Utc::now();
        let entries = state.entries.clone();
        let mut hits = state.index().rank(&entries, prompt, now);
        hits.retain(|hit| self.shown(&state.entries[hit.index], now));
        if hits.is_empty() {
            return None;
        }
        let mut stale_by_index = HashMap::new();
        for hit in &hits {
            stale_by_index.insert(hit.index, stale_of(&mut state, self.repo_root.as_deref(), hit.index));
        }
        let entries = &state.entries;
        let block = recall::attach(entries, &hits, |entry| {
            entries
                .iter()
                .position(|other| std::ptr::eq(other, entry))
                .and_then(|at| stale_by_index.get(&at).cloned())
                .unwrap_or_default()
        });
        let block = self.redact_lines(&block);
        let record = MemoryRecall {
            turn,
            entries: hits
                .iter()
                .map(|hit| RecalledEntry {
                    id: entries[hit.index].id(),
                    score: hit.score,
                    terms: hit.terms.clone(),
                    stale: stale_by_index.get(&hit.index).cloned().unwrap_or_default(),
                })
                .collect(),
        };
        let used: Vec<PathBuf> = hits
            .iter()
            .map(|hit| &entries[hit.index])
            .filter(|entry| entry.scope != Scope::Shared)
            .map(|entry| entry.path.clone())
            .collect();
        if self.mode == MemoryMode::On && !used.is_empty() {
            std::thread::spawn(move || touch(&used, Utc::now()));
        }
        Some((block, record))
    }
}

/// One scope's index text within the caps: whole lines up to [`super::MAX_INDEX_LINES`] lines and
/// [`super::MAX_INDEX_BYTES`] bytes, then a line counting the entries left out. Only the lines
/// kept are rendered.
fn capped(scope: Scope, entries: &[&Entry]) -> String {
    let total = entries.len() + 1;
    if total <= super::MAX_INDEX_LINES {
        let index = index::render_index(scope, entries);
        if index.len() <= super::MAX_INDEX_BYTES {
            return index;
        }
        return cut(scope, index.split_inclusive('\n').map(str::to_string), total);
    }
    let lines =
        std::iter::once(index::header(scope)).chain(index::sorted(entries).into_iter().map(index::line));
    cut(scope, lines, total)
}

/// The first of `lines` (each ending in a newline) within the caps, then the count of the
/// `total` lines left out.
fn cut(scope: Scope, lines: impl Iterator<Item = String>, total: usize) -> String {
    let mut out = String::with_capacity(super::MAX_INDEX_BYTES);
    let mut kept = 0;
    for line in lines {
        if kept + 1 >= super::MAX_INDEX_LINES || out.len() + line.len() + 199 > super::MAX_INDEX_BYTES {
            break;
        }
        out.push_str(&line);
        kept += 1;
    }
    if kept < total {
        out.push_str(&format!(
            "- ({} more entries not shown here; view /memories/{scope} to list them all)\n",
            total - kept
        ));
    }
    out
}

/// Counts a recall of each entry file in `paths`: `use_count` + 1 and `last_used` = `now`. A file
/// that changed into something unparsable meanwhile is left alone.
fn touch(paths: &[PathBuf], now: chrono::DateTime<Utc>) {
    for path in paths {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Ok((mut meta, body)) = entry::parse(&text) else { continue };
        meta.use_count = meta.use_count.saturating_add(1);
        meta.last_used = Some(now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        let Some(dir) = path.parent() else { continue };
        let Ok(mut file) = tempfile::NamedTempFile::new_in(dir) else { continue };
        if std::io::Write::write_all(&mut file, entry::render(&meta, &body).as_bytes()).is_ok() {
            let _ = file.persist(path);
        }
    }
}

/// The evidence files of entry `at` changed since it was written (computed once per session).
fn stale_of(state: &mut State, repo_root: Option<&Path>, at: usize) -> Vec<String> {
    let entry = &state.entries[at];
    let (Some(root), false) = (repo_root, entry.meta.evidence.is_empty()) else { return Vec::new() };
    let id = entry.id();
    if let Some(known) = state.stale.get(&id) {
        return known.clone();
    }
    let changed = stale::stale_evidence(root, &entry.meta.evidence);
    state.stale.insert(id, changed.clone());
    changed
}

/// The repository root `workspace` is in: the nearest ancestor holding `.git`.
fn repo_root(workspace: &Path) -> Option<PathBuf> {
    workspace.ancestors().find(|dir| dir.join(".git").exists()).map(Path::to_path_buf)
}

/// Why the user or project scope cannot be written, if it cannot (an existing folder that is
/// read-only, or a parent that cannot hold one).
fn unwritable(roots: &Roots) -> Option<String> {
    for root in [&roots.user, &roots.project] {
        let existing = root.ancestors().find(|dir| dir.exists())?;
        let readonly = std::fs::metadata(existing).map(|meta| meta.permissions().readonly()).unwrap_or(true);
        let probe = tempfile::Builder::new().prefix(".lathe-probe").tempfile_in(existing);
        if readonly || probe.is_err() {
            return Some(format!("{} is not writable", existing.display()));
        }
    }
    None
}

/// Redacts secret-shaped values in the arguments of `memory` calls of `message` before it is
/// recorded: the ledger and the session file never hold them, and the tool refuses a call whose
/// arguments carry a redaction mark (nothing is written).
pub fn redact_calls(message: &mut AssistantMessage) {
    for content in &mut message.content {
        if let Content::ToolCall(call) = content
            && call.name == super::MEMORY_TOOL
        {
            secrets::redact_value(&mut call.arguments);
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
