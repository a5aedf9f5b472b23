//! What a tool shows a person about one call, so front ends switch on data, not on tool names: a
//! [`ToolPreview`] before the call runs (in [`AgentEvent::PermissionRequest`]) and a [`ResultView`]
//! once it has run (in [`AgentEvent::ToolResult`]). Both are made by the tool itself; a tool without
//! one leaves the front end to show the raw arguments or output.
//!
//! [`AgentEvent::PermissionRequest`]: crate::AgentEvent::PermissionRequest
//! [`AgentEvent::ToolResult`]: crate::AgentEvent::ToolResult

use serde::{Deserialize, Serialize};

/// What a call would do, as its tool describes it for a permission prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolPreview {
    /// A change to one file.
    Diff {
        /// The file, relative to the workspace when inside it.
        path: String,
        /// Unified diff (`--- a/<path>`, `+++ b/<path>`, `@@` hunks with 3 lines of context) of the
        /// file as it is on disk and as it would be after the call; a new file's diff is all
        /// additions. `\r` is removed; a very long diff ends with a `[diff cut at N chars]` line.
        unified: String,
        /// How the call changes the file.
        change: FileChange,
    },
    /// A command line to run.
    Command {
        /// The command line, as the model wrote it.
        command: String,
        /// The absolute directory it would run in.
        cwd: String,
    },
    /// A URL to fetch.
    Url {
        /// The URL, as the model wrote it.
        url: String,
    },
}

/// How a [`ToolPreview::Diff`] changes its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    /// Parts of the file are replaced (`edit_file`).
    Edit,
    /// The whole content is written, creating the file when it does not exist (`write_file`).
    Write,
}

/// How a front end may show a finished call's result instead of its raw output, as the tool
/// describes it. Only set on successful results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResultView {
    /// The call changed a file: the output's first line says how, this diff shows the change.
    Diff {
        /// The file, relative to the workspace when inside it.
        path: String,
        /// Unified diff of the change (see [`ToolPreview::Diff`]); a created file's diff is all
        /// additions.
        unified: String,
    },
    /// One line that stands for the whole output (`read 42 lines`).
    Line {
        /// The line.
        text: String,
    },
}
