//! `lathe teammate --team T --name N`: a teammate's process (started by its lead, headless).
//!
//! Loop: take the unread mail of its mailbox ([`lathe_core::team::mailbox`]) as one turn's input
//! (its first message is its task) → run the turn; a call that needs approval is put to the lead's
//! user (`--lead-approves`, [`lathe_core::team::approval`]) or, when the lead is headless, denied and
//! told to the lead with the rule that would allow it → move the cursor past the mail → post
//! `idle` (with the end of its answer) to the lead → wait on the mailbox file (inotify) for more.
//! It ends on `shutdown`, on SIGTERM, or, started `--attached`, when its stdin closes (the lead
//! exited, however). A restarted teammate reads on from its persisted cursor: mail of a turn cut
//! short by a crash comes again.

use lathe_core::host::{SessionBuilder, TeamSeat};
use lathe_core::team::approval::is_reply;
use lathe_core::team::mailbox::{Kind, LEAD, Mailbox, Message, marked, post};
use lathe_core::team::roster::Roster;
use lathe_core::team::watch::MailWatch;
use lathe_core::team::{TeamError, inbox_dir, team_dir};
use lathe_protocol::{AgentEvent, AgentOp, Content, ToolStatus};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use crate::args::{Cli, EXIT_FAILED, EXIT_OK, EXIT_USAGE};

/// Characters of a turn's answer that go with the `idle` notice.
const IDLE_CHARS: usize = 600;

/// Runs the teammate `name` of `team`; the process's exit status.
pub async fn run(cli: &Cli, seat: TeamSeat, attached: bool) -> u8 {
    let (team, name) = (seat.team.as_str(), seat.name.as_str());
    let home = lathe_core::paths::lathe_home();
    let dir = team_dir(&home, team);
    let checked = Roster::load(&dir).and_then(|roster| {
        if roster.members.contains_key(name) {
            Ok(())
        } else {
            Err(TeamError::Invalid(format!("`{name}` is not a member of the team `{team}`")))
        }
    });
    if let Err(error) = checked {
        eprintln!("lathe: error: {error}");
        return EXIT_USAGE;
    }
    let inbox = inbox_dir(&dir);
    let opened =
        Mailbox::open(&inbox, name).and_then(|mailbox| Ok((MailWatch::new(&mailbox.file())?, mailbox)));
    let (watch, mailbox) = match opened {
        Ok(opened) => opened,
        Err(error) => {
            eprintln!("lathe: error: {error}");
            return EXIT_FAILED;
        }
    };
    let mut flags = cli.flags();
    flags.teams = false;
    let name = name.to_string();
    let session = match SessionBuilder::new(flags).teammate(seat).start().await {
        Ok(session) => session,
        Err(error) => {
            eprintln!("lathe: error: {error}");
            return EXIT_USAGE;
        }
    };
    let ended = end_signals(attached);
    let mut teammate = Teammate { name, inbox, session };
    let code = teammate.serve(&mailbox, &watch, &ended).await;
    let _ = teammate.session.ops.send(AgentOp::Quit);
    while teammate.session.events.recv().await.is_some() {}
    let _ = teammate.session.task.await;
    code
}

struct Teammate {
    name: String,
    inbox: std::path::PathBuf,
    session: lathe_core::SessionHandle,
}

impl Teammate {
    async fn serve(&mut self, mailbox: &Mailbox, watch: &MailWatch, ended: &CancellationToken) -> u8 {
        loop {
            let unread = match mailbox.unread() {
                Ok(unread) => unread,
                Err(error) => {
                    eprintln!("lathe: error: {error}");
                    return EXIT_FAILED;
                }
            };
            for note in &unread.skipped {
                eprintln!("lathe: warning: {note}");
            }
            // Answers to this teammate's approval requests were taken by its calls.
            let messages: Vec<Message> = unread.messages.into_iter().filter(|m| !is_reply(m)).collect();
            if messages.is_empty() && unread.end > mailbox.cursor().unwrap_or(unread.end) {
                let _ = mailbox.commit(unread.end);
                continue;
            }
            if messages.is_empty() {
                tokio::select! {
                    () = watch.changed() => continue,
                    () = ended.cancelled() => return EXIT_OK,
                }
            }
            if messages.iter().any(|message| message.kind == Kind::Shutdown) {
                let _ = mailbox.commit(unread.end);
                return EXIT_OK;
            }
            let input = marked(&messages);
            let _ = self.session.ops.send(AgentOp::UserInput { content: vec![Content::text(input)] });
            let Some(answer) = self.turn(ended).await else { return EXIT_OK };
            if let Err(error) = mailbox.commit(unread.end) {
                eprintln!(
                    "lathe: warning: the read cursor was not saved ({error}); this mail may come again"
                );
            }
            let text: String = answer.chars().take(IDLE_CHARS).collect();
            self.tell_lead(Kind::Idle, text).await;
        }
    }

    /// Runs one turn's events to its end; its answer (or why it stopped), `None` when the
    /// teammate must end now (the lead is gone, the session closed).
    async fn turn(&mut self, ended: &CancellationToken) -> Option<String> {
        let mut cancelled = false;
        loop {
            let event = tokio::select! {
                event = self.session.events.recv() => event?,
                () = ended.cancelled(), if !cancelled => {
                    cancelled = true;
                    let _ = self.session.ops.send(AgentOp::Cancel);
                    continue;
                }
            };
            match event {
                AgentEvent::ToolResult { result, tool, .. } if result.status == ToolStatus::Denied => {
                    let text: String = result
                        .content
                        .iter()
                        .filter_map(|content| match content {
                            Content::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect();
                    if text.contains("permission denied") {
                        self.tell_lead(Kind::Permission, format!("my `{tool}` call was denied: {text}"))
                            .await;
                    }
                }
                AgentEvent::Finished { cause, final_text, .. } => {
                    if cancelled {
                        return None;
                    }
                    return Some(if cause.is_success() {
                        final_text
                    } else {
                        format!("my turn stopped: {cause:?}\n{final_text}")
                    });
                }
                _ => {}
            }
        }
    }

    async fn tell_lead(&self, kind: Kind, text: String) {
        let (inbox, message) = (self.inbox.clone(), Message::new(&self.name, kind, text));
        let posted = tokio::task::spawn_blocking(move || post(&inbox, LEAD, &message)).await;
        if let Ok(Err(error)) = posted {
            eprintln!("lathe: warning: the lead was not told: {error}");
        }
    }
}

/// Fires on SIGTERM, SIGINT or SIGHUP, and (`attached`) when stdin reaches its end.
fn end_signals(attached: bool) -> CancellationToken {
    let ended = CancellationToken::new();
    let fire = ended.clone();
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) =
            (signal(SignalKind::terminate()), signal(SignalKind::interrupt()), signal(SignalKind::hangup()))
        else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
            _ = hup.recv() => {}
        }
        fire.cancel();
    });
    if attached {
        let fire = ended.clone();
        tokio::spawn(async move {
            let mut stdin = tokio::io::stdin();
            let mut buffer = [0u8; 256];
            while matches!(stdin.read(&mut buffer).await, Ok(n) if n > 0) {}
            fire.cancel();
        });
    }
    ended
}
