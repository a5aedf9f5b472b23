//! Classifications of [`AgentEvent`]s that front ends and relays share, each written once here as
//! an exhaustive match, so a new event variant is classified in one place rather than in a copy
//! of the same match in every consumer.

use crate::agent::AgentEvent;

impl AgentEvent {
    /// Whether this is a streamed piece of the response being received (`TextDelta`,
    /// `ThinkingDelta`, `OutputProgress`): superseded by the `AssistantMessage` that follows, so a
    /// consumer that shows only whole messages (a relay, a log) can drop it.
    pub fn is_stream_delta(&self) -> bool {
        match self {
            AgentEvent::TextDelta { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::OutputProgress { .. } => true,
            AgentEvent::SessionStarted { .. }
            | AgentEvent::TurnStarted { .. }
            | AgentEvent::AssistantMessage { .. }
            | AgentEvent::ToolCallStarted { .. }
            | AgentEvent::PermissionRequest { .. }
            | AgentEvent::PlanReady(_)
            | AgentEvent::Question(_)
            | AgentEvent::ToolResult { .. }
            | AgentEvent::Todos { .. }
            | AgentEvent::Retry(_)
            | AgentEvent::Usage { .. }
            | AgentEvent::ContextPruned { .. }
            | AgentEvent::Compacted { .. }
            | AgentEvent::ModeChanged { .. }
            | AgentEvent::ModelChanged { .. }
            | AgentEvent::UserTurns { .. }
            | AgentEvent::Report { .. }
            | AgentEvent::Rewound { .. }
            | AgentEvent::CommandFinished { .. }
            | AgentEvent::Goal { .. }
            | AgentEvent::Loop { .. }
            | AgentEvent::Subagent { .. }
            | AgentEvent::BackgroundAgent { .. }
            | AgentEvent::Commands { .. }
            | AgentEvent::Steered { .. }
            | AgentEvent::Warning { .. }
            | AgentEvent::Finished { .. } => false,
        }
    }

    /// Whether the loop waits for an answer op to this event (`PermissionRequest`, answered with
    /// `AgentOp::Permission`; `PlanReady`, answered with `AgentOp::PlanAnswer`; `Question`,
    /// answered with `AgentOp::QuestionAnswer`). A relay passes such an event on as it is, never
    /// wrapped, so that the front end that answers sees it.
    pub fn needs_answer(&self) -> bool {
        match self {
            AgentEvent::PermissionRequest { .. } | AgentEvent::PlanReady(_) | AgentEvent::Question(_) => true,
            AgentEvent::SessionStarted { .. }
            | AgentEvent::TurnStarted { .. }
            | AgentEvent::TextDelta { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::OutputProgress { .. }
            | AgentEvent::AssistantMessage { .. }
            | AgentEvent::ToolCallStarted { .. }
            | AgentEvent::ToolResult { .. }
            | AgentEvent::Todos { .. }
            | AgentEvent::Retry(_)
            | AgentEvent::Usage { .. }
            | AgentEvent::ContextPruned { .. }
            | AgentEvent::Compacted { .. }
            | AgentEvent::ModeChanged { .. }
            | AgentEvent::ModelChanged { .. }
            | AgentEvent::UserTurns { .. }
            | AgentEvent::Report { .. }
            | AgentEvent::Rewound { .. }
            | AgentEvent::CommandFinished { .. }
            | AgentEvent::Goal { .. }
            | AgentEvent::Loop { .. }
            | AgentEvent::Subagent { .. }
            | AgentEvent::BackgroundAgent { .. }
            | AgentEvent::Commands { .. }
            | AgentEvent::Steered { .. }
            | AgentEvent::Warning { .. }
            | AgentEvent::Finished { .. } => false,
        }
    }
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
