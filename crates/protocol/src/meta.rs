//! Session bookkeeping in the ledger ([`Meta`]): saved with the conversation, never sent to a
//! model. Goals and loops record their state here, so a resumed session finds them.

use serde::{Deserialize, Serialize};

/// A saved-but-never-sent item: session bookkeeping in the session file (serialised as
/// `{"type": "meta", "meta": "session_start" | "model_switch" | …, …}`). Encoders skip every
/// `Meta`; a few (`Rewind`, `RequestFailed`, `ImagesReplaced`, `ContextPruned`) change which
/// items or which form of them later requests carry ([`crate::conversation`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "meta", rename_all = "snake_case")]
pub enum Meta {
    /// The session began.
    SessionStart {
        /// The session's id: a UUID v7 (a subagent's transcript prefixes it with the subagent's kind).
        session_id: String,
        /// The working directory the session started in (absolute path).
        cwd: String,
        /// The model name as the provider knows it.
        model: String,
        /// The provider's name as lathe-provider's `Provider::name` reports it (`anthropic`, `openai`,
        /// `responses`, `local`).
        provider: String,
        /// Milliseconds since the Unix epoch.
        time_ms: u64,
    },
    /// The model changed mid-session.
    ModelSwitch {
        /// The model used from here on, as the provider knows it.
        model: String,
        /// The provider used from here on (names as in `SessionStart`).
        provider: String,
    },
    /// The permission mode changed.
    ModeChange {
        /// The new mode's config spelling ([`crate::PermissionMode::as_str`], e.g. `accept-edits`).
        mode: String,
    },
    /// A note for humans (e.g. a repaired torn line on resume).
    Note {
        /// The note, one line of plain text.
        text: String,
    },
    /// Before a tool changed `path` in user turn `turn`, its bytes were saved in the session's file
    /// history as `blob` (the SHA-256 hex of the bytes, a file name under `<session>/files/`), or
    /// it did not exist (`blob` is `None`). The first change of a file in a user turn is recorded.
    FileSnapshot {
        /// 1-based user turn.
        turn: u32,
        /// Absolute path of the file.
        path: String,
        /// The saved bytes' SHA-256 (hex), or `None` when the file did not exist.
        blob: Option<String>,
    },
    /// The conversation was rewound to just before user turn `turn`: the items from that turn's
    /// user message up to this item are no longer part of the conversation (they stay in the file,
    /// which is append-only).
    Rewind {
        /// The 1-based user turn rewound to.
        turn: u32,
    },
    /// Writing the session file failed: items after this one were not saved.
    Incomplete {
        /// The error, e.g. "No space left on device".
        reason: String,
    },
    /// A model request failed for good (after its retries). The user messages it was answering —
    /// those after the last assistant message — are left out of every later request
    /// ([`crate::conversation::request_messages`]), so a prompt that failed is never glued to the
    /// next one.
    RequestFailed {
        /// The error's stable kind (`context_window_exceeded`, `bad_request`, …).
        kind: String,
        /// The error message, with the provider's text verbatim.
        message: String,
    },
    /// The provider could not process an image of the conversation: from here on every image
    /// before this item is sent as a text note instead.
    ImagesReplaced {
        /// The provider's error message that rejected the image, verbatim.
        reason: String,
    },
    /// Old outputs of re-readable tools were replaced by one-line stubs in every later request
    /// (FEATURES.md §E, pruning). The results stay in the ledger unchanged; requests built after
    /// this item send the stub instead.
    ContextPruned {
        /// The tool calls whose results are sent as stubs from now on.
        call_ids: Vec<String>,
        /// Estimated request size before pruning, in tokens.
        tokens_before: u64,
        /// Estimated request size after pruning, in tokens.
        tokens_after: u64,
    },
    /// The `memory` tool changed a memory file (FEATURES.md §I).
    MemoryWrite(crate::memory::MemoryWrite),
    /// The `memory` tool refused a write whose value looked like a secret.
    MemoryRefused(crate::memory::MemoryRefusal),
    /// Memory entries were attached to a user message.
    MemoryRecall(crate::memory::MemoryRecall),
    /// A goal was set (FEATURES.md §K): its condition, check command and protected files.
    GoalStart(crate::goal::GoalStart),
    /// Lathe ran the goal's check command after a turn. A check counts as a test run in the run
    /// report ([`crate::report`]).
    GoalCheck {
        /// 1-based iteration of the goal.
        iteration: u32,
        /// The command, as the user gave it.
        command: String,
        /// Its exit status (`None` when it was killed or could not run).
        exit_code: Option<i32>,
        /// Whether its time limit stopped it.
        timed_out: bool,
        /// The last lines of its output (at most 4 000 characters).
        output_tail: String,
        /// Wall time, in ms.
        elapsed_ms: u64,
    },
    /// The verdict on one iteration of a goal.
    GoalVerdict(crate::goal::GoalVerdict),
    /// The goal ended or was cleared.
    GoalEnd {
        /// The final status's name ([`crate::goal::GoalStatus::as_str`]).
        status: String,
        /// Why.
        reason: String,
    },
    /// The iteration budget of the active goal was raised (`/goal budget +N`); a goal that had
    /// ended `budget_limited` is active again.
    GoalBudget {
        /// The budget from here on.
        max_iterations: u32,
    },
    /// A background sub-agent started (`task` with `run_in_background`). Until its
    /// [`Meta::SubagentEnded`], it is running; a resumed session finds the ones that never ended.
    SubagentStarted {
        /// The sub-agent's id (its transcript is `<session>/subagents/<id>.jsonl`).
        agent_id: String,
        /// The agent type, or `fork`.
        subagent_type: String,
        /// The call's short description.
        description: String,
    },
    /// A background sub-agent's end reached the conversation: its notification was delivered,
    /// it was killed with `task_kill`, or a resumed session found it unfinished.
    SubagentEnded {
        /// The sub-agent's id.
        agent_id: String,
        /// `completed`, `failed`, `killed` or `lost` (the session ended before it finished).
        status: String,
    },
    /// `tool_search` loaded the full schemas of deferred tools: from here on they are offered in
    /// every request of the session, appended at the end of the tool list in the order first
    /// loaded (a resumed session rebuilds that list from these items).
    ToolsLoaded {
        /// Model-facing tool names (`mcp__server__tool`), in the order loaded.
        names: Vec<String>,
    },
    /// A loop started (`/loop`).
    LoopStart(crate::loops::LoopStart),
    /// A tick of the loop ended; the next one is due at its `next_ms`.
    LoopTick(crate::loops::LoopTick),
    /// The loop ended: stopped, done (a self-paced tick scheduled no wakeup), or a cap reached.
    LoopEnd {
        /// Why.
        reason: String,
    },
}
