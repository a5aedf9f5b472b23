//! The file mailbox of a team: `<team>/inbox/<member>.jsonl`, one append-only file per member
//! (the lead is the member `lead`), each line one [`Message`] as JSON; and beside it
//! `<member>.cursor`, the byte offset up to which the member has taken its mail.
//!
//! - Writing ([`post`]): under the file's exclusive lock ([`super::lock`]), one `write` of the
//!   whole line, then `fdatasync`: a message [`post`] returned for is on disk. A line cut short
//!   by a writer that died mid-write is closed with a newline by the next writer (which holds the
//!   lock, so no writer is still on it): the fragment becomes one unreadable line that readers
//!   skip with a note, and the messages after it are intact.
//! - Reading ([`Mailbox::unread`]): the complete lines after the cursor (a line still being
//!   written, without its newline yet, waits for the next read). Taking them moves nothing:
//!   [`Mailbox::commit`] persists the new cursor (atomically) once the messages are safe with
//!   their reader (in its session file), so a reader that crashes before that gets them again
//!   from its restart, and never loses one.

use std::fmt::Write as _;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{TeamError, lock, store};

/// The lead's member name in its team's mailbox.
pub const LEAD: &str = "lead";

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Text from one member to another (`send_message`); a teammate's first one is its task.
    Message,
    /// A teammate finished a turn and waits for mail; `text` is the end of its last answer.
    Idle,
    /// The lead asks a teammate to end.
    Shutdown,
    /// A call of a teammate's was denied (headless: nobody could approve it); `text` names the
    /// rule that would allow it.
    Permission,
    /// A teammate's process ended without being asked to (crash, kill); sent by the lead's side.
    Died,
    /// A teammate's process ended after a shutdown.
    Exited,
    /// A teammate's call waits for the lead's user to approve it; `text` is one JSON
    /// [`super::approval::ApprovalRequest`].
    Approval,
    /// The lead's answer to an `approval`; `text` is one JSON [`super::approval::ApprovalAnswer`].
    Answer,
}

impl Kind {
    /// The word used in marked text (`message`, `idle`, …).
    pub fn word(self) -> &'static str {
        match self {
            Kind::Message => "message",
            Kind::Idle => "idle",
            Kind::Shutdown => "shutdown",
            Kind::Permission => "permission",
            Kind::Died => "died",
            Kind::Exited => "exited",
            Kind::Approval => "approval",
            Kind::Answer => "answer",
        }
    }
}

/// One line of a mailbox file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// A unique id (UUID v7).
    pub id: String,
    /// The sending member (`lead` or a teammate's name).
    pub from: String,
    /// What it is.
    pub kind: Kind,
    /// Its text.
    #[serde(default)]
    pub text: String,
    /// When it was written, milliseconds since the Unix epoch.
    pub time_ms: u64,
}

impl Message {
    /// A new message from `from`, stamped now.
    pub fn new(from: &str, kind: Kind, text: impl Into<String>) -> Message {
        Message {
            id: uuid::Uuid::now_v7().to_string(),
            from: from.to_string(),
            kind,
            text: text.into(),
            time_ms: crate::clock::now_ms(),
        }
    }
}

/// The mailbox file of `member` in the inbox folder `inbox`.
pub fn mailbox_file(inbox: &Path, member: &str) -> PathBuf {
    inbox.join(format!("{member}.jsonl"))
}

/// Appends `message` to the mailbox of `to` in `inbox` (see the module docs); it is on disk when
/// this returns. Blocks for the lock's retries.
pub fn post(inbox: &Path, to: &str, message: &Message) -> Result<(), TeamError> {
    let path = mailbox_file(inbox, to);
    let io = |error| TeamError::Io { path: path.clone(), error };
    std::fs::create_dir_all(inbox).map_err(io)?;
    let mut line = serde_json::to_string(message)
        .map_err(|error| TeamError::Corrupt { path: path.clone(), detail: error.to_string() })?;
    line.push('\n');
    lock::locked(&inbox.join(format!("{to}.lock")), || {
        let mut file =
            std::fs::OpenOptions::new().create(true).append(true).read(true).open(&path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut last = [0u8; 1];
        let torn = len > 0 && file.read_at(&mut last, len - 1).map_err(io)? == 1 && last[0] != b'\n';
        let bytes = if torn { format!("\n{line}") } else { line.clone() };
        file.write_all(bytes.as_bytes()).map_err(io)?;
        file.sync_data().map_err(io)
    })
}

/// Mail taken from a mailbox, not yet committed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unread {
    /// The messages, oldest first.
    pub messages: Vec<Message>,
    /// The cursor after them, for [`Mailbox::commit`].
    pub end: u64,
    /// A note for each line that is not a message (cut short by a writer that died).
    pub skipped: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Cursor {
    offset: u64,
}

/// One member's side of its mailbox: the unread mail and the cursor.
#[derive(Debug, Clone)]
pub struct Mailbox {
    inbox: PathBuf,
    member: String,
}

impl Mailbox {
    /// The mailbox of `member` in the inbox folder `inbox`; its file is created (empty) when
    /// missing, so it can be watched.
    pub fn open(inbox: &Path, member: &str) -> Result<Mailbox, TeamError> {
        let path = mailbox_file(inbox, member);
        let io = |error| TeamError::Io { path: path.clone(), error };
        std::fs::create_dir_all(inbox).map_err(io)?;
        std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(io)?;
        Ok(Mailbox { inbox: inbox.to_path_buf(), member: member.to_string() })
    }

    /// The mailbox file.
    pub fn file(&self) -> PathBuf {
        mailbox_file(&self.inbox, &self.member)
    }

    fn cursor_file(&self) -> PathBuf {
        self.inbox.join(format!("{}.cursor", self.member))
    }

    /// The persisted cursor (0 before the first commit).
    pub fn cursor(&self) -> Result<u64, TeamError> {
        Ok(store::read::<Cursor>(&self.cursor_file())?.map_or(0, |cursor| cursor.offset))
    }

    /// The complete messages after the cursor. A cursor past the end of the file (the file was
    /// replaced) starts again from its beginning.
    pub fn unread(&self) -> Result<Unread, TeamError> {
        let path = self.file();
        let io = |error| TeamError::Io { path: path.clone(), error };
        let mut start = self.cursor()?;
        let mut file = std::fs::File::open(&path).map_err(io)?;
        if start > file.metadata().map_err(io)?.len() {
            start = 0;
        }
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let complete = bytes.iter().rposition(|byte| *byte == b'\n').map_or(0, |at| at + 1);
        let mut unread = Unread { end: start + complete as u64, ..Unread::default() };
        let mut offset = start;
        for line in bytes[..complete].split_inclusive(|byte| *byte == b'\n') {
            let text = String::from_utf8_lossy(line);
            if !text.trim().is_empty() {
                match serde_json::from_str::<Message>(text.trim()) {
                    Ok(message) => unread.messages.push(message),
                    Err(error) => unread.skipped.push(format!(
                        "{}: the line at byte {offset} is not a message (cut short by a writer that \
                         died?): {error}",
                        path.display()
                    )),
                }
            }
            offset += line.len() as u64;
        }
        Ok(unread)
    }

    /// Persists `end` (from [`Mailbox::unread`]) as the cursor: those messages are taken.
    pub fn commit(&self, end: u64) -> Result<(), TeamError> {
        store::write(&self.cursor_file(), &Cursor { offset: end })
    }

    /// Appends `message` to this member's own mailbox (a note the lead's side writes for the
    /// lead).
    pub fn post_own(&self, message: &Message) -> Result<(), TeamError> {
        post(&self.inbox, &self.member, message)
    }
}

/// The marked text of a batch of mail (`<team-mail>` holding one `<message from kind>` each).
pub fn marked(messages: &[Message]) -> String {
    let mut out = String::from("<team-mail>\n");
    for message in messages {
        let _ = writeln!(out, "<message from=\"{}\" kind=\"{}\">", message.from, message.kind.word());
        out.push_str(&defused(message.text.trim_end()));
        out.push_str("\n</message>\n");
    }
    out.push_str("</team-mail>");
    out
}

/// `text` with the tags of marked mail broken up (`</message>` → `</ message>`), so a member's
/// message cannot close its block and forge another member's message or a notice.
fn defused(text: &str) -> String {
    text.replace("<message", "< message")
        .replace("</message", "</ message")
        .replace("team-mail>", "team-mail >")
}
