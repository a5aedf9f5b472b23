//! Text files through the client (`fs/read_text_file`, `fs/write_text_file`) when it offers them
//! at `initialize`: the tools then see the editor's unsaved edits and their edits land in its
//! buffers (see [`lathe_tools::editor`]).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use futures::future::BoxFuture;
use lathe_tools::EditorFiles;

/// The client's file system, for one session.
#[derive(Clone)]
pub struct ClientFiles {
    cx: ConnectionTo<Client>,
    /// The session's id, known once it has started (no tool runs before).
    pub session: Arc<OnceLock<String>>,
    /// The client offered `fs/read_text_file` (without it, reads go to the disk).
    read: bool,
}

impl ClientFiles {
    /// Files through `cx`; `read`: the client offered `fs/read_text_file` too.
    pub fn new(cx: ConnectionTo<Client>, read: bool) -> ClientFiles {
        ClientFiles { cx, session: Arc::new(OnceLock::new()), read }
    }
}

impl std::fmt::Debug for ClientFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFiles").field("session", &self.session.get()).field("read", &self.read).finish()
    }
}

impl EditorFiles for ClientFiles {
    fn read(&self, path: &Path) -> BoxFuture<'static, Result<String, String>> {
        let (cx, session, path, offered) =
            (self.cx.clone(), self.session.get().cloned(), path.to_path_buf(), self.read);
        Box::pin(async move {
            if !offered {
                return Err("the client does not offer fs/read_text_file".into());
            }
            let session = session.ok_or("the session has not started")?;
            let request = acp::ReadTextFileRequest::new(session, path);
            cx.send_request(request)
                .block_task()
                .await
                .map(|response| response.content)
                .map_err(|e| e.to_string())
        })
    }

    fn write(&self, path: &Path, text: String) -> BoxFuture<'static, Result<(), String>> {
        let (cx, session, path) = (self.cx.clone(), self.session.get().cloned(), path.to_path_buf());
        Box::pin(async move {
            let session = session.ok_or("the session has not started")?;
            let request = acp::WriteTextFileRequest::new(session, path, text);
            cx.send_request(request).block_task().await.map(|_| ()).map_err(|e| e.to_string())
        })
    }
}
