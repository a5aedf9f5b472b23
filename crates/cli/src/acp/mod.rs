//! `lathe acp`: Lathe as an Agent Client Protocol agent (JSON-RPC 2.0, one message per line on
//! stdin/stdout; schema v1, <https://agentclientprotocol.com>), for editors such as Zed, JetBrains
//! IDEs and Neovim. A front end on the session core like print mode and the terminal UI: each ACP
//! session is one Lathe session ([`lathe_core::host::SessionBuilder`], interactive), driven with
//! ops and watched through its events.
//!
//! Methods: `initialize` (load session, image and embedded-context prompts, MCP servers over stdio
//! and HTTP), `session/new` (`cwd` is the workspace, `mcpServers` are added as `--mcp-config`
//! servers), `session/load` (a saved session of that workspace, its transcript replayed as
//! updates before the answer), `session/prompt` (answered with the stop reason when the run
//! ends), `session/set_mode` (Lathe's permission modes, ids `default`, `accept-edits`, `plan`,
//! `auto`, `dont-ask`, `bypass`) and the `session/cancel` notification (as Esc in the UI: the
//! request is aborted and running commands are killed). The agent sends `session/update`
//! (message and thought chunks, tool calls and their updates, the plan, available commands, the
//! mode, usage) and `session/request_permission` (permission prompts, a plan to approve, a
//! question). What only Lathe knows (cost, tokens, receipts, the run report) is in `_meta.lathe`.
//!
//! When the client offers `fs/write_text_file` (and `fs/read_text_file`), `write_file` and
//! `edit_file` write into its buffers and `read_file` reads them, instead of the disk.
//!
//! Nothing but protocol messages is written to stdout; diagnostics go to `LATHE_LOG`.

mod files;
pub(crate) mod live;
pub(crate) mod mapping;
pub(crate) mod open;
pub(crate) mod replay;
pub(crate) mod server;
mod transport;

pub use server::run;
