//! Lathe's tools: the contract every tool follows, the registry the agent loop uses, and the eleven
//! built-in tools (`read_file`, `write_file`, `edit_file`, `grep`, `glob`, `list_dir`, `shell` and
//! its background jobs' `shell_output` and `shell_kill`, `todo_write`, `web_fetch`).
//!
//! # The contract
//! A tool implements [`Tool`]: a model-facing name and description, an `Args` type from which the
//! JSON schema is generated (schemars, compacted), an [`Effect`] (read-only, mutating, network;
//! mutating unless declared — fail closed), and an async `run`. Every `Tool` is also a [`DynTool`],
//! the object-safe form the [`ToolRegistry`] holds and the loop calls.
//!
//! # Order of operations for one call
//! 1. **Validate**: [`DynTool::call`] checks the arguments against the schema (jsonschema). On
//!    failure it returns [`ToolError::InvalidArguments`] naming the field, and nothing runs.
//! 2. **Run with cancel**: the arguments are deserialised and [`Tool::run`] gets the session's
//!    [`ToolContext`] — workspace root (relative paths resolve against it), cancellation token,
//!    shared [`FileTracker`] (read-before-write), spill directory, shell environment and timeout.
//!    Blocking I/O runs on the blocking pool, raced against the token; `shell` kills its whole
//!    process group on cancel or timeout.
//! 3. **Cap and spill**: output beyond a tool's in-context budget keeps its head and tail and the
//!    full text is written to the spill directory ([`cap_output`]); the [`ToolOutput`] names the
//!    spill path. Terminal output is cleaned first ([`clean_terminal`]).
//!
//! Errors say who must act: [`ToolError::Failed`] messages are for the model ("edit_file:
//! old_string occurs 3 times in src/lib.rs (lines 10, 42, 77); ..."); a command that ran but failed
//! is an `Ok` output with `is_error` set and its exit code.
//!
//! ```no_run
//! # async fn demo() -> Result<(), lathe_tools::ToolError> {
//! use lathe_tools::{ToolContext, ToolRegistry};
//! let registry = ToolRegistry::builtin();
//! let ctx = ToolContext::new("/path/to/project".into());
//! let read = registry.get("read_file").ok_or(lathe_tools::ToolError::Failed("no read_file".into()))?;
//! let output = read.call(serde_json::json!({"path": "src/main.rs", "limit": 50}), &ctx).await?;
//! println!("{}", output.text_content());
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod builtin;
pub mod context;
pub mod editor;
pub mod files;
pub mod output;
pub mod registry;
pub mod syntax;
pub mod tool;

#[cfg(test)]
mod test_support;

pub use builtin::jobs::{JobState, JobSummary, JobTable};
pub use context::{DEFAULT_SHELL_TIMEOUT_MS, ShellEnv, ToolContext};
pub use editor::EditorFiles;
pub use files::{FileState, FileTracker, LeftoverName, Staleness};
pub use output::{cap_output, clean_terminal};
pub use registry::ToolRegistry;
pub use tool::{
    Access, CompiledSchema, DynTool, Effect, Tool, ToolError, ToolOutput, compact_schema, one_line,
    summarize_args, validate_args,
};
