//! What front ends send the agent loop ([`AgentOp`]) and the data those operations carry: a
//! permission answer, a user turn as `/rewind` lists it, the files a rewind changes.

use serde::{Deserialize, Serialize};

use crate::ledger::Content;
use crate::mode::PermissionMode;

/// What a front end tells the loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum AgentOp {
    /// A new user message.
    UserInput {
        /// Text and images.
        content: Vec<Content>,
    },
    /// A user message for the running turn (steering, as a message typed while the agent works):
    /// it joins the turn's next model request, after the results of the calls in flight, and
    /// [`crate::AgentEvent::Steered`] says so. When no turn runs, or the turn ends without another
    /// request, it starts the next turn as a [`AgentOp::UserInput`] would. `from` (one line, e.g.
    /// which remote client typed it) is saved as a [`crate::Meta::Note`] just before it.
    Steer {
        /// Text and images.
        content: Vec<Content>,
        /// Who typed it, for the ledger's note; `None`: no note.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
    /// The answer to a [`crate::AgentEvent::PermissionRequest`].
    Permission {
        /// The call it answers.
        call_id: String,
        /// The decision.
        answer: PermissionAnswer,
    },
    /// The answer to an [`AgentEvent::PlanReady`](crate::AgentEvent::PlanReady) (see [`crate::plan`]).
    PlanAnswer {
        /// The `exit_plan_mode` call it answers.
        call_id: String,
        /// The decision.
        answer: crate::plan::PlanAnswer,
    },
    /// The answer to an [`AgentEvent::Question`](crate::AgentEvent::Question) (see [`crate::question`]).
    QuestionAnswer {
        /// The `ask_user` call it answers.
        call_id: String,
        /// The answer.
        answer: crate::question::QuestionAnswer,
    },
    /// Stop the running turn: abort the request and kill running tools. Pending permission
    /// requests are answered "no".
    Cancel,
    /// Change the permission mode; takes effect from the next tool call on, also in a running
    /// turn. (A front end parses what the user typed with [`PermissionMode`]'s `FromStr`, which
    /// names the modes in its error.)
    SetMode {
        /// The new mode.
        mode: PermissionMode,
    },
    /// Use another model from the next turn on (a running turn finishes on the current one).
    SetModel {
        /// The model name.
        model: String,
        /// A provider name (built-in or `[providers.NAME]`); `None` keeps the current provider.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    /// Ask for [`crate::AgentEvent::UserTurns`] (answered once no turn is running).
    ListTurns,
    /// Ask for [`crate::AgentEvent::Report`] on the conversation so far (answered once no turn is
    /// running).
    Report,
    /// Compact the conversation now (`/compact [focus]`): a summary boundary replaces everything
    /// but a recent tail; announced with [`crate::AgentEvent::Compacted`]. Waits for a running turn.
    Compact {
        /// What the summary should concentrate on.
        focus: Option<String>,
    },
    /// Restore the files and the conversation to the state just before user turn `turn`
    /// (1-based). The front end confirms first, showing [`UserTurn::files`]. Refused with a
    /// warning while a turn is running.
    Rewind {
        /// The user turn to go back to.
        turn: u32,
    },
    /// Run `command` with `bash -c` in the workspace as the user's own command (a `!command`
    /// typed at the prompt: no permission check, the user typed it), in its own process group with
    /// stdin closed. Answered with [`crate::AgentEvent::CommandFinished`]; its output is handed to the
    /// model with the next user message. It runs beside the session's turns and ops (a prompt sent
    /// meanwhile is answered without its output); one runs at a time. `Cancel` kills it and
    /// everything it started when no turn runs (a running turn is cancelled first); the end of the
    /// session kills it too.
    RunCommand {
        /// The command line.
        command: String,
    },
    /// Work toward `goal` from the next user input on: after each turn of the model Lathe runs
    /// the check and an evaluator request, and continues until the goal is met or a budget, the
    /// stall detector or the integrity guard ends it (announced with [`crate::AgentEvent::Goal`]). A goal
    /// with a problem ([`crate::goal::GoalSpec::problem`]) is refused with a warning.
    SetGoal {
        /// The goal.
        goal: crate::goal::GoalSpec,
    },
    /// End the goal (`/goal clear`): one set but not started is dropped; one active or paused in
    /// the ledger ends `cleared` ([`crate::goal::GoalStatus::Cleared`], a `goal_end` item). A
    /// running goal turn is cancelled first. Announced with [`crate::AgentEvent::Goal`]; a warning
    /// when there is none.
    ClearGoal,
    /// Raise the goal's iteration budget by `by` (`/goal budget +N`), also while its turns run; the
    /// new budget is a `goal_budget` ledger item, so a resumed session keeps it. A goal that ended
    /// `budget_limited` becomes active again and goes on with the next user input.
    RaiseGoalBudget {
        /// Iterations to add.
        by: u32,
    },
    /// Start a loop (`/loop`); refused with a warning when its spec has a problem
    /// ([`crate::loops::LoopSpec::problem`]) or a loop already runs. Announced with
    /// [`crate::AgentEvent::Loop`]; the front end then asks for each tick.
    StartLoop {
        /// The loop.
        spec: crate::loops::LoopSpec,
    },
    /// Stop the loop (`/loop stop`, Esc); announced with [`crate::AgentEvent::Loop`].
    StopLoop,
    /// Run the loop's next tick now: its prompt as a user turn, under the session's cost budget
    /// (a front end sends it when the tick is due and nothing else is going on: no turn, no open
    /// dialog). Answered with [`crate::AgentEvent::Loop`] (its state after the tick, or why it
    /// ended), after the turn's `Finished` when one ran.
    LoopTick,
    /// Save a note for humans in the ledger (a [`crate::Meta::Note`], never sent to the model),
    /// e.g. which remote client typed the next message. Waits for a running turn, so it lands
    /// just before a `UserInput` sent after it.
    Note {
        /// One line of plain text.
        text: String,
    },
    /// End the session: a running turn is cancelled (its calls get results), the session file is
    /// synced, and the event stream closes.
    Quit,
}

/// One user turn, as listed for `/rewind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserTurn {
    /// 1-based number among the user's own messages (injected ones do not count).
    pub turn: u32,
    /// The message text.
    pub prompt: String,
    /// The files a rewind to this turn would change (empty when nothing differs).
    pub files: Vec<FileRewind>,
}

/// One file a rewind changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRewind {
    /// Absolute path.
    pub path: String,
    /// What happens to it.
    pub action: RewindAction,
}

/// What a rewind does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindAction {
    /// Its earlier bytes are written back.
    Restore,
    /// It did not exist then and is deleted.
    Delete,
    /// It existed then, is gone now, and is written back.
    Recreate,
}

/// A user's answer to a permission prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum PermissionAnswer {
    /// Run it this once.
    AllowOnce,
    /// Run it and remember the suggested prefix rule (stored in `.lathe/settings.local.json`).
    AllowAlways,
    /// Do not run it; the optional feedback goes to the model.
    Deny {
        /// What the user wants instead.
        feedback: Option<String>,
    },
}
