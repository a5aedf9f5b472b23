//! The events hooks can attach to, with Claude Code's names for them (the settings keys and
//! `hook_event_name` of the hooks reference).

/// The events hooks can attach to (Claude Code's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// Before a tool call is checked and run.
    PreToolUse,
    /// After a tool call ran.
    PostToolUse,
    /// When the user sends a prompt, before the model sees it.
    UserPromptSubmit,
    /// When the model ends its turn.
    Stop,
    /// When a sub-agent ends its work.
    SubagentStop,
    /// When a session starts or resumes.
    SessionStart,
    /// When a session ends.
    SessionEnd,
    /// Before the context is compacted.
    PreCompact,
    /// When Lathe notifies the user (a permission prompt).
    Notification,
}

impl HookEvent {
    /// All events.
    pub const ALL: [HookEvent; 9] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::PreCompact,
        HookEvent::Notification,
    ];

    /// The settings key and `hook_event_name` (`PreToolUse`).
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Notification => "Notification",
        }
    }

    /// The event called `name`.
    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|event| event.name() == name)
    }

    /// Whether exit 2 blocks (otherwise its stderr is only shown to the user).
    pub(super) fn can_block(self) -> bool {
        match self {
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::UserPromptSubmit
            | HookEvent::Stop
            | HookEvent::SubagentStop => true,
            HookEvent::SessionStart
            | HookEvent::SessionEnd
            | HookEvent::PreCompact
            | HookEvent::Notification => false,
        }
    }

    /// Whether plain stdout of a successful hook becomes context for the model.
    pub(super) fn stdout_is_context(self) -> bool {
        matches!(self, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
    }
}
