//! Why a memory operation was refused. Every message is written for the model to act on: it names
//! the path or limit involved, says that nothing was written, and says what to do instead.

use std::path::PathBuf;

use super::{MAX_ENTRY_BYTES, MAX_INDEX_BYTES, MAX_INDEX_LINES};

/// A refused or failed memory operation.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The path is not a valid memory path.
    #[error(
        "memory: `{path}` is not a valid memory path: {reason}. Memory paths look like \
         /memories/user/<name>.md or /memories/project/<name>.md; nothing was written"
    )]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A write aimed at the read-only shared scope.
    #[error(
        "memory: `{path}` is in the shared scope (the repository's .lathe/memory), which is read \
         only; nothing was written. Save it under /memories/project/ and ask the user to run \
         `lathe memory promote <id>` to share it"
    )]
    ReadOnly {
        /// The path as given.
        path: String,
    },
    /// The shared scope was addressed outside a git repository.
    #[error("memory: there is no shared scope: the workspace is not inside a git repository")]
    NoSharedScope,
    /// The repository's `.lathe` or `.lathe/memory` is a symbolic link: a cloned repository could
    /// point it anywhere, so shared memory is read only from a real folder.
    #[error(
        "memory: the project-shared memory folder `{path}` is (inside) a symbolic link; Lathe reads \
         and writes shared memory only in a real .lathe/memory folder of the repository; nothing was \
         read or written there"
    )]
    LinkedSharedScope {
        /// The folder that is a link, relative to the repository (`.lathe` or `.lathe/memory`).
        path: String,
    },
    /// No entry exists at the path.
    #[error("memory: no memory at `{path}`; view /memories to list the entries")]
    NotFound {
        /// The path or id as given.
        path: String,
    },
    /// No entry has the id the user gave.
    #[error("memory: no memory has the id `{id}`; `lathe memory list` shows the ids")]
    UnknownId {
        /// The id as given.
        id: String,
    },
    /// The target of a rename (or promote) already exists.
    #[error("memory: `{path}` already exists; nothing was written. Pick another name or delete it first")]
    AlreadyExists {
        /// The path as given.
        path: String,
    },
    /// An id is not of the form `<scope>/<name>`.
    #[error("memory: `{id}` is not a memory id; ids look like project/pnpm or user/editor-prefs")]
    InvalidId {
        /// The id as given.
        id: String,
    },
    /// A required argument is missing.
    #[error("memory: `{command}` needs the `{argument}` argument; nothing was written")]
    MissingArgument {
        /// The command.
        command: &'static str,
        /// The missing argument.
        argument: &'static str,
    },
    /// An argument has an unusable value.
    #[error("memory: {message}; nothing was written")]
    InvalidArgument {
        /// What is wrong and how to fix it.
        message: String,
    },
    /// `old_str` does not occur exactly once.
    #[error(
        "memory: old_str occurs {count} times in `{path}`{lines}; it must occur exactly once: \
         {fix}; nothing was written"
    )]
    Occurrences {
        /// The virtual path.
        path: String,
        /// How many times it occurs.
        count: usize,
        /// ` (lines 3, 9)` or empty.
        lines: String,
        /// What to do.
        fix: &'static str,
    },
    /// The new `MEMORY.md` would exceed its cap.
    #[error(
        "memory: the write was refused: the memory index would have {lines} lines and {bytes} \
         bytes, over its cap of {max_lines} lines and {max_bytes} bytes. Nothing was cut or \
         written. Delete or merge entries (view the scope to see them), then try again"
    )]
    IndexFull {
        /// Lines the index would have.
        lines: usize,
        /// Bytes the index would have.
        bytes: usize,
        /// [`MAX_INDEX_LINES`].
        max_lines: usize,
        /// [`MAX_INDEX_BYTES`].
        max_bytes: usize,
    },
    /// The memory file would exceed [`MAX_ENTRY_BYTES`].
    #[error(
        "memory: `{path}` would be {bytes} bytes, over the limit of {max} bytes for one memory; \
         nothing was written. Keep memories short or split this one into several files",
        max = MAX_ENTRY_BYTES
    )]
    EntryTooLarge {
        /// The virtual path.
        path: String,
        /// Its size in bytes.
        bytes: usize,
    },
    /// A text argument holds something that looks like a secret.
    #[error(
        "memory: a value looks like a secret ({}); memories never hold secrets, and nothing was \
         written. Save a pointer instead (\"the deploy key is in 1Password item X\")",
        kinds.join(", ")
    )]
    Secret {
        /// The kinds of secret found (`aws-access-key`, `redacted`, …).
        kinds: Vec<&'static str>,
    },
    /// A file changed on disk between [`super::plan`] and [`super::apply`].
    #[error(
        "memory: {} changed on disk since this change was planned; nothing was written. View it \
         and retry",
        path.display()
    )]
    Conflict {
        /// The real path.
        path: PathBuf,
    },
    /// Reading or writing a file failed.
    #[error("memory: cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`write`, `read`, `create the folder`, `delete`).
        action: &'static str,
        /// The real path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl MemoryError {
    /// An [`MemoryError::IndexFull`] for an index of `lines` lines and `bytes` bytes.
    pub(crate) fn index_full(lines: usize, bytes: usize) -> MemoryError {
        MemoryError::IndexFull { lines, bytes, max_lines: MAX_INDEX_LINES, max_bytes: MAX_INDEX_BYTES }
    }

    /// An [`MemoryError::InvalidPath`].
    pub(crate) fn path(path: &str, reason: impl Into<String>) -> MemoryError {
        MemoryError::InvalidPath { path: path.to_string(), reason: reason.into() }
    }

    /// An [`MemoryError::Io`].
    pub(crate) fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> MemoryError {
        MemoryError::Io { action, path: path.to_path_buf(), source }
    }
}
