//! The built-in tools, one module each, and the I/O helpers they share. The search tools (`glob`,
//! `grep`, `list_dir`) share one rule for ignored files, hidden files and symbolic links
//! (`walk.rs`).
//!
//! Blocking file-system work (reading a FIFO, walking a tree) runs on tokio's blocking pool and is
//! raced against the session's cancellation token, so a slow read never stalls other calls and an
//! interrupt always returns promptly.

pub mod edit;
pub(crate) mod edit_hint;
mod edit_indent;
mod git_index;
pub mod glob;
pub mod grep;
pub mod jobs;
pub mod list_dir;
pub mod preview;
pub mod python_hint;
pub mod read;
pub mod shell;
pub mod shell_env;
mod shell_exit;
pub mod shell_jobs;
pub mod todo;
mod walk;
pub mod web_fetch;
pub mod write;

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::context::ToolContext;
use crate::tool::{DynTool, ToolError};

pub use edit::EditFile;
pub use edit_hint::lines_using;
pub use glob::Glob;
pub use grep::Grep;
pub use jobs::{JobState, JobSummary, JobTable};
pub use list_dir::ListDir;
pub use preview::MAX_PREVIEW_DIFF_CHARS;
pub use read::ReadFile;
pub use shell::Shell;
pub use shell_jobs::{ForegroundShell, ShellKill, ShellOutput};
pub use todo::TodoWrite;
pub use walk::{DirEntryName, dir_entries};
pub use web_fetch::WebFetch;
pub use write::{CreateFile, WriteFile, counted_diff, unified_diff};

/// The eleven built-in tools, in the order their specs are sent.
pub fn all() -> Vec<Arc<dyn DynTool>> {
    vec![
        Arc::new(ReadFile),
        Arc::new(WriteFile),
        Arc::new(EditFile::default()),
        Arc::new(Grep),
        Arc::new(Glob),
        Arc::new(ListDir),
        Arc::new(Shell::default()),
        Arc::new(ShellOutput),
        Arc::new(ShellKill),
        Arc::new(TodoWrite),
        Arc::new(WebFetch),
    ]
}

/// Largest number of bytes a tool reads from one file (a 50 MB log is fine; `/dev/zero` is not).
pub const MAX_READ_BYTES: u64 = 128 * 1024 * 1024;

/// Runs blocking `work` on the blocking pool; returns [`ToolError::Cancelled`] as soon as the
/// session is cancelled (the blocking thread is left to finish on its own).
pub(crate) async fn blocking<T, F>(ctx: &ToolContext, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let handle = tokio::task::spawn_blocking(work);
    tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
        joined = handle => joined.map_err(|e| ToolError::Failed(format!("internal error: {e}"))),
    }
}

/// The bytes of `path`, at most `limit` of them; the flag is true when the file was longer.
/// Works for FIFOs and character devices as well as regular files (no `stat`-based refusal).
pub(crate) fn read_limited(path: &Path, limit: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    let truncated = bytes.len() as u64 > limit;
    if truncated {
        bytes.truncate(limit as usize);
    }
    Ok((bytes, truncated))
}

/// A one-line description of an I/O error for the model ("permission denied").
pub(crate) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "it does not exist".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}
