//! Opening the session a front end asked for: a new one, the workspace's latest, or one by id.
//! Loading skips torn lines with warnings; a session directory that cannot be written leaves the
//! session unsaved (with a warning) rather than stopping the run.

use std::path::Path;

use lathe_protocol::LedgerItem;

use super::error::StartError;
use super::flags::SessionChoice;
use crate::history::FileHistory;
use crate::session::{self, SessionWriter};

/// An opened session, before the agent is built.
pub(crate) struct Opened {
    pub id: String,
    pub ledger: Vec<LedgerItem>,
    pub writer: Option<SessionWriter>,
    pub history: Option<FileHistory>,
    pub warnings: Vec<String>,
}

pub(crate) fn open(sessions: &Path, choice: &SessionChoice, workspace: &str) -> Result<Opened, StartError> {
    let mut warnings = Vec::new();
    let (id, ledger) = match choice {
        SessionChoice::New => (uuid::Uuid::now_v7().to_string(), Vec::new()),
        SessionChoice::Continue | SessionChoice::Resume(_) => {
            let path = match choice {
                SessionChoice::Resume(id) => {
                    if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
                        return Err(StartError::Usage(format!("`{id}` is not a session id")));
                    }
                    sessions.join(format!("{id}.jsonl"))
                }
                SessionChoice::Continue | SessionChoice::New => {
                    session::latest(sessions).map_err(|error| StartError::Session(error.to_string()))?
                }
            };
            if !path.is_file() {
                return Err(StartError::Session(format!("no session {} for {workspace}", path.display())));
            }
            let loaded = session::load(&path).map_err(|error| StartError::Session(error.to_string()))?;
            warnings
                .extend(loaded.warnings.iter().map(|warning| format!("session {}: {warning}", loaded.id)));
            if loaded.incomplete {
                warnings.push(format!(
                    "session {}: saving failed during an earlier run, so its end may be missing",
                    loaded.id
                ));
            }
            (loaded.id, loaded.items)
        }
    };
    let (writer, history) = match SessionWriter::open(sessions, &id) {
        Ok(writer) => (Some(writer), Some(FileHistory::new(sessions.join(&id).join("files")))),
        Err(error) => {
            warnings.push(format!("{error}; nothing of this session is saved (no --continue, no /rewind)"));
            (None, None)
        }
    };
    Ok(Opened { id, ledger, writer, history, warnings })
}
