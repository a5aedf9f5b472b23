//! Text files through the front end's editor instead of the disk: a front end whose client offers
//! it (ACP's `fs/read_text_file` and `fs/write_text_file`) sets [`ToolContext::editor`]
//! (`crate::ToolContext`), and then `read_file` reads a text file as the editor has it (unsaved
//! edits included) and `write_file` / `edit_file` write their result into the editor's buffer
//! instead of the file on disk. The checks before a write (read first, unchanged since, the
//! permission preview) still look at the disk.

use std::path::Path;

use futures::future::BoxFuture;

/// An editor that reads and writes text files for the tools. Paths are absolute.
pub trait EditorFiles: Send + Sync + std::fmt::Debug {
    /// The text of `path` as the editor has it; `Err` with the editor's message when it cannot
    /// (the tool then reads the disk).
    fn read(&self, path: &Path) -> BoxFuture<'static, Result<String, String>>;

    /// Replaces the text of `path` in the editor with `text`; `Err` with the editor's message.
    fn write(&self, path: &Path, text: String) -> BoxFuture<'static, Result<(), String>>;
}
