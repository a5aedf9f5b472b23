//! The lead's side of a team ([`TeamHub`]): the team it created, its teammates' processes and
//! their states, its mailbox and what it takes from it before each request.
//!
//! - `team_create` makes the team's folder and roster and opens the lead's mailbox with a watch.
//! - `spawn_teammate` writes the teammate's task to its mailbox as its first message, records it
//!   in the roster and starts its process ([`super::spawn`]); a task watches the process, and when
//!   it ends the lead's mailbox gets `exited` (it was asked to shut down) or `died` (anything
//!   else: a crash, a SIGKILL), and the files it owned are released.
//! - Before each request the lead's unread mail becomes one marked user-side message
//!   ([`super::mailbox::marked`]) and the cursor moves past it once it is in the session file.
//! - When the lead's model ends its turn while teammates work, the turn waits for the team
//!   ([`TeamHub::wait_for_mail`]): until every teammate is idle or gone, or sooner for a denied
//!   permission or a death, then the mail goes out with the next request.
//! - When the session ends ([`TeamHub::end_all`]) every teammate is asked to shut down and its
//!   stdin pipe closed; one still running after [`SHUTDOWN_GRACE`] gets SIGTERM, then SIGKILL,
//!   as a whole process group.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::process::{Child, ChildStdin};
use tokio_util::sync::CancellationToken;

use super::approval::{Answered, ApprovalRequest, answer_message};
pub use super::delivery::{Delivery, Wait};
use super::mailbox::{Kind, LEAD, Mailbox, Message, marked, post};
pub use super::mates::{MateInfo, MateState, Role, Roles};
use super::mates::{alive, brief, next_state};
use super::roster::{self, Member, Roster};
use super::spawn::{self, Launch};
use super::tools::Seat;
use super::watch::MailWatch;
use super::{TeamError, check_name, inbox_dir, owners::Owners, team_dir};

/// How long teammates get to end after a shutdown before their groups are signalled.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Teammates one lead may have running at once.
pub const MAX_TEAMMATES: usize = 8;

struct Mate {
    state: MateState,
    last_ms: u64,
    pid: Option<u32>,
    workspace: PathBuf,
    stdin: Option<ChildStdin>,
    monitor: Option<tokio::task::JoinHandle<()>>,
    shutdown_asked: bool,
}

struct Active {
    name: String,
    dir: PathBuf,
    mailbox: Mailbox,
    watch: Arc<MailWatch>,
    mates: BTreeMap<String, Mate>,
}

#[derive(Default)]
struct State {
    active: Option<Active>,
    closed: bool,
}

/// The lead's side of its team.
pub struct TeamHub {
    home: PathBuf,
    workspace: PathBuf,
    launch: Launch,
    roles: Roles,
    policy: Arc<lathe_policy::Policy>,
    state: Arc<Mutex<State>>,
    /// Teammates are started one at a time: the checks (name taken, how many run) and the start
    /// belong together, and git locks the repository's files while it makes a worktree.
    spawning: tokio::sync::Mutex<()>,
    /// Coordinator mode: the lead only dispatches ([`TeamHub::set_coordinator`]).
    coordinator: std::sync::atomic::AtomicBool,
    /// The teammates' approval requests answered so far ([`super::approval`]).
    answered: Answered,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl TeamHub {
    /// A hub for a lead in `workspace` (Lathe's home `home`) that starts teammates with `launch`,
    /// their agent types from `roles`, in the permission mode `policy` has at the time.
    pub fn new(
        home: PathBuf,
        workspace: PathBuf,
        launch: Launch,
        roles: Roles,
        policy: Arc<lathe_policy::Policy>,
    ) -> TeamHub {
        TeamHub {
            home,
            workspace,
            launch,
            roles,
            policy,
            state: Arc::default(),
            spawning: tokio::sync::Mutex::new(()),
            coordinator: Default::default(),
            answered: Answered::default(),
        }
    }

    /// Creates the team `name` (one per session); the answer for `team_create`.
    pub fn create(&self, name: &str) -> Result<String, TeamError> {
        check_name("team", name)?;
        let mut state = lock(&self.state);
        if state.closed {
            return Err(TeamError::Invalid("the session is ending; no team can start".into()));
        }
        if let Some(active) = &state.active {
            return Err(TeamError::Invalid(format!("this session already leads the team `{}`", active.name)));
        }
        let dir = team_dir(&self.home, name);
        if let Ok(old) = Roster::load(&dir)
            && old.lead_pid != std::process::id()
            && alive(old.lead_pid)
        {
            return Err(TeamError::Invalid(format!(
                "the team `{name}` exists and its lead (process {}) is running; choose another name",
                old.lead_pid
            )));
        }
        let roster = Roster {
            name: name.to_string(),
            lead_pid: std::process::id(),
            workspace: self.workspace.clone(),
            members: BTreeMap::new(),
        };
        roster::save(&dir, &roster)?;
        let mailbox = Mailbox::open(&inbox_dir(&dir), LEAD)?;
        let watch = Arc::new(MailWatch::new(&mailbox.file())?);
        state.active =
            Some(Active { name: name.to_string(), dir: dir.clone(), mailbox, watch, mates: BTreeMap::new() });
        Ok(format!(
            "Created the team `{name}` ({}). Add work with board_add, start teammates with spawn_teammate; \
             their messages reach you as <team-mail> before your next request, and when you end your turn \
             while teammates work, Lathe waits for them.",
            dir.display()
        ))
    }

    /// Starts the teammate `name` with its task `prompt`; the answer for `spawn_teammate`.
    pub async fn spawn(
        &self,
        name: &str,
        prompt: &str,
        agent_type: Option<&str>,
        worktree: bool,
    ) -> Result<String, TeamError> {
        check_name("teammate", name)?;
        if name == LEAD {
            return Err(TeamError::Invalid("`lead` is the lead's own name; choose another".into()));
        }
        let _one_at_a_time = self.spawning.lock().await;
        let (team, dir) = {
            let state = lock(&self.state);
            let Some(active) = &state.active else {
                return Err(TeamError::Invalid("no team yet: call team_create first".into()));
            };
            if let Some(mate) = active.mates.get(name).filter(|mate| mate.state.running()) {
                return Err(TeamError::Invalid(format!(
                    "`{name}` is already running ({})",
                    mate.state.word()
                )));
            }
            let running = active.mates.values().filter(|mate| mate.state.running()).count();
            if running >= MAX_TEAMMATES {
                return Err(TeamError::Invalid(format!(
                    "{running} teammates are running (at most {MAX_TEAMMATES})"
                )));
            }
            (active.name.clone(), active.dir.clone())
        };
        let role = match agent_type {
            None => None,
            Some(kind) => Some((self.roles)(kind).map_err(TeamError::Invalid)?),
        };
        let model =
            role.as_ref().and_then(|role| role.model.clone()).unwrap_or_else(|| self.launch.model.clone());
        let role = role.map(|role| role.prompt);
        let workspace = if worktree {
            spawn::worktree(&self.workspace, &dir, &team, name).await?
        } else {
            self.workspace.clone()
        };
        let first = Message::new(LEAD, Kind::Message, brief(&team, name, role.as_deref(), prompt));
        let member = Member {
            name: name.to_string(),
            agent_type: agent_type.map(str::to_string),
            workspace: workspace.clone(),
            worktree,
            pid: None,
            started_ms: crate::clock::now_ms(),
        };
        let (inbox, record) = (inbox_dir(&dir), dir.clone());
        tokio::task::spawn_blocking(move || {
            post(&inbox, &member.name, &first)?;
            roster::change(&record, |roster| {
                roster.members.insert(member.name.clone(), member);
                Ok(())
            })
        })
        .await
        .map_err(|error| TeamError::Invalid(error.to_string()))??;
        let mode = self.policy.mode().as_str();
        let mut child = spawn::start(&self.launch, &dir, &team, name, &workspace, &model, mode)?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let _ = roster::change(&dir, |roster| {
            if let Some(member) = roster.members.get_mut(name) {
                member.pid = pid;
            }
            Ok(())
        });
        let monitor = tokio::spawn(watch_process(self.state.clone(), dir.clone(), name.to_string(), child));
        let mut state = lock(&self.state);
        if let Some(active) = state.active.as_mut() {
            active.mates.insert(
                name.to_string(),
                Mate {
                    state: MateState::Working,
                    last_ms: crate::clock::now_ms(),
                    pid,
                    workspace: workspace.clone(),
                    stdin,
                    monitor: Some(monitor),
                    shutdown_asked: false,
                },
            );
        }
        let place = if worktree {
            format!("its own git worktree {}", workspace.display())
        } else {
            "your workspace".into()
        };
        Ok(format!(
            "Started the teammate `{name}` (process {}, model {model}) in {place}. It works on its task now and \
             reports with send_message; you get its mail as <team-mail>. send_message {{\"to\": \"{name}\", \
             \"text\": \"shutdown\"}} ends it.",
            pid.map_or("?".to_string(), |pid| pid.to_string())
        ))
    }

    /// Coordinator mode on or off: while on, the lead's requests offer only its read-only tools
    /// (the team's and the board's among them) and its other calls are refused.
    pub fn set_coordinator(&self, on: bool) {
        self.coordinator.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether coordinator mode is on.
    pub fn coordinator(&self) -> bool {
        self.coordinator.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Asks the teammate `name` to shut down (`/team stop`); an error naming the members for an
    /// unknown one.
    pub fn stop(&self, name: &str) -> Result<String, TeamError> {
        let (dir, known) = {
            let state = lock(&self.state);
            let Some(active) = &state.active else {
                return Err(TeamError::Invalid("this session leads no team".into()));
            };
            let running = active.mates.get(name).is_some_and(|mate| mate.state.running());
            (
                active.dir.clone(),
                running.then_some(()).ok_or_else(|| {
                    let names: Vec<&str> = active.mates.keys().map(String::as_str).collect();
                    format!("no running teammate `{name}`; the teammates are {}", names.join(", "))
                }),
            )
        };
        known.map_err(TeamError::Invalid)?;
        post(&inbox_dir(&dir), name, &Message::new(LEAD, Kind::Shutdown, "shutdown"))?;
        self.sent(name, Kind::Shutdown);
        Ok(format!("asked `{name}` to shut down"))
    }

    /// The teammates, by name.
    pub fn members(&self) -> Vec<MateInfo> {
        let state = lock(&self.state);
        let Some(active) = &state.active else { return Vec::new() };
        active
            .mates
            .iter()
            .map(|(name, mate)| MateInfo {
                name: name.clone(),
                state: mate.state,
                last_activity_ms: mate.last_ms,
                pid: mate.pid,
                workspace: mate.workspace.clone(),
            })
            .collect()
    }

    /// The lead's unread mail as one marked text, with the teammates' states updated from it;
    /// `None` without a team or mail. Commit it with [`TeamHub::commit`] once it is recorded.
    pub fn take_mail(&self) -> Option<Delivery> {
        let mut state = lock(&self.state);
        let active = state.active.as_mut()?;
        let unread = match active.mailbox.unread() {
            Ok(unread) => unread,
            Err(error) => {
                return Some(Delivery { text: String::new(), end: 0, skipped: vec![error.to_string()] });
            }
        };
        if unread.messages.is_empty() && unread.skipped.is_empty() {
            return None;
        }
        for message in &unread.messages {
            if let Some(mate) = active.mates.get_mut(&message.from) {
                mate.last_ms = message.time_ms;
                mate.state = next_state(mate.state, message.kind);
            }
        }
        let text = if unread.messages.is_empty() { String::new() } else { marked(&unread.messages) };
        Some(Delivery { text, end: unread.end, skipped: unread.skipped })
    }

    /// Moves the lead's cursor to `end` (its mail is in the session file).
    pub fn commit(&self, end: u64) -> Result<(), TeamError> {
        let state = lock(&self.state);
        match &state.active {
            Some(active) => active.mailbox.commit(end),
            None => Ok(()),
        }
    }

    /// The teammates' approval requests not answered yet ([`super::approval`]).
    pub fn open_approvals(&self) -> Vec<(Message, ApprovalRequest)> {
        let state = lock(&self.state);
        let Some(active) = &state.active else { return Vec::new() };
        self.answered.open(&active.mailbox.unread().unwrap_or_default().messages)
    }

    /// Posts the lead's `answer` to the approval request `request` to its teammate.
    pub fn answer_approval(&self, request: &Message, answer: lathe_protocol::PermissionAnswer) {
        self.answered.insert(&request.id);
        let Ok((dir, _)) = self.seat() else { return };
        if let Err(error) = post(&inbox_dir(&dir), &request.from, &answer_message(request, answer)) {
            tracing::warn!("the answer to `{}` was not posted: {error}", request.from);
        }
    }

    /// Waits until the team has something for the lead: every teammate idle or gone with mail
    /// unread ([`Wait::Mail`]), a denied permission, an open approval request
    /// ([`TeamHub::open_approvals`]) or a death unread (at once), or nothing unread and nobody
    /// working ([`Wait::Settled`]).
    pub async fn wait_for_mail(&self, cancel: &CancellationToken) -> Wait {
        loop {
            let watch = {
                let state = lock(&self.state);
                let Some(active) = &state.active else { return Wait::Settled };
                let unread = active.mailbox.unread().unwrap_or_default();
                let urgent = unread.messages.iter().any(|m| matches!(m.kind, Kind::Permission | Kind::Died))
                    || self.answered.any_open(&unread.messages);
                let busy = active.mates.iter().any(|(name, mate)| {
                    let last = unread
                        .messages
                        .iter()
                        .filter(|m| m.from == *name)
                        .fold(mate.state, |s, m| next_state(s, m.kind));
                    last.busy()
                });
                let has_mail = !unread.messages.is_empty() || !unread.skipped.is_empty();
                match (has_mail, busy) {
                    (true, _) if urgent || !busy => return Wait::Mail,
                    (false, false) => return Wait::Settled,
                    _ => active.watch.clone(),
                }
            };
            tokio::select! {
                () = watch.changed() => {}
                () = cancel.cancelled() => return Wait::Cancelled,
            }
        }
    }

    /// Ends the team with the session: every teammate still running is asked to shut down, its
    /// stdin closed, and after [`SHUTDOWN_GRACE`] its process group signalled. A warning for each
    /// that had to be signalled.
    pub async fn end_all(&self) -> Vec<String> {
        let (inbox, mut waiting) = {
            let mut state = lock(&self.state);
            state.closed = true;
            let Some(active) = state.active.as_mut() else { return Vec::new() };
            let mut waiting = Vec::new();
            for (name, mate) in active.mates.iter_mut() {
                if mate.state.running() && !mate.shutdown_asked {
                    mate.shutdown_asked = true;
                    mate.state = MateState::Stopping;
                    waiting.push((name.clone(), mate.pid, mate.monitor.take(), true));
                } else {
                    waiting.push((name.clone(), mate.pid, mate.monitor.take(), false));
                }
                mate.stdin = None;
            }
            (inbox_dir(&active.dir), waiting)
        };
        for (name, _, _, ask) in &waiting {
            if *ask {
                let _ = post(&inbox, name, &Message::new(LEAD, Kind::Shutdown, "the lead's session ended"));
            }
        }
        let mut warnings = Vec::new();
        let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
        for (name, pid, monitor, _) in waiting.iter_mut() {
            let Some(monitor) = monitor else { continue };
            if tokio::time::timeout_at(deadline, &mut *monitor).await.is_ok() {
                continue;
            }
            if let Some(group) = (*pid).and_then(lathe_process::Group::from_pid) {
                group.signal(lathe_process::SIGTERM);
                if tokio::time::timeout(Duration::from_secs(2), &mut *monitor).await.is_err() {
                    group.signal(lathe_process::SIGKILL);
                    let _ = monitor.await;
                }
            }
            warnings
                .push(format!("the teammate `{name}` did not end on shutdown; its processes were stopped"));
        }
        warnings
    }
}

impl Seat for TeamHub {
    fn seat(&self) -> Result<(PathBuf, String), TeamError> {
        match &lock(&self.state).active {
            Some(active) => Ok((active.dir.clone(), LEAD.to_string())),
            None => Err(TeamError::Invalid("no team yet: call team_create first".into())),
        }
    }

    fn sent(&self, to: &str, kind: Kind) {
        let mut state = lock(&self.state);
        let Some(mate) = state.active.as_mut().and_then(|active| active.mates.get_mut(to)) else { return };
        if !mate.state.running() {
            return;
        }
        if kind == Kind::Shutdown {
            mate.shutdown_asked = true;
            mate.state = MateState::Stopping;
        } else if mate.state == MateState::Idle {
            mate.state = MateState::Working;
        }
        mate.last_ms = crate::clock::now_ms();
    }
}

/// Waits for a teammate's process; tells the lead how it ended and releases its files.
async fn watch_process(state: Arc<Mutex<State>>, dir: PathBuf, name: String, mut child: Child) {
    let status = child.wait().await;
    let how = match &status {
        Ok(status) => status.to_string(),
        Err(error) => format!("its status is unknown: {error}"),
    };
    let asked = {
        let mut state = lock(&state);
        let mate = state
            .active
            .as_mut()
            .filter(|active| active.dir == dir)
            .and_then(|active| active.mates.get_mut(&name));
        let asked = mate.as_ref().is_some_and(|mate| mate.shutdown_asked);
        if let Some(mate) = mate {
            mate.stdin = None;
        }
        asked
    };
    let clean = asked && status.as_ref().is_ok_and(std::process::ExitStatus::success);
    let (kind, text) = if clean {
        (Kind::Exited, format!("`{name}` has shut down."))
    } else {
        (
            Kind::Died,
            format!(
                "The teammate `{name}` died: its process ended ({how}) without being asked to. What it was doing \
                 may be unfinished; its mailbox and session file are kept (its log: {}), and spawn_teammate with \
                 the same name starts it again, reading on from its mail.",
                dir.join("logs").join(format!("{name}.log")).display()
            ),
        )
    };
    let inbox = inbox_dir(&dir);
    let _ = tokio::task::spawn_blocking(move || {
        let _ = post(&inbox, LEAD, &Message::new(&name, kind, text));
        let _ = Owners::new(&dir).release(&name);
    })
    .await;
}
