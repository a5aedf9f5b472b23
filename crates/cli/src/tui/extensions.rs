//! The user's extensions in the UI: the `/skills` listing, and a sub-agent's progress under the
//! `task` call that started it (a live row while it runs — its type, its tool calls so far and the
//! one running now — and a summary row with the call once it is done).

use lathe_protocol::{AgentEvent, UserCommand, UserCommandKind};
use ratatui::text::{Line, Span};

use super::cells::NoticeKind;
use super::state::UiState;
use super::theme;
use super::wrap::{sanitize, truncate};

/// What a sub-agent has done so far, for the row under its parent call.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentProgress {
    /// The agent type (`explore`, a custom agent's name).
    pub kind: String,
    /// Tool calls it started.
    pub tool_calls: u32,
    /// Its latest tool call: the tool's name and its summary of the call.
    pub last: Option<String>,
}

/// A background sub-agent that is running (what `/status` lists).
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundRow {
    /// Its id.
    pub agent_id: String,
    /// Its agent type, or `fork`.
    pub kind: String,
    /// The call's short description.
    pub description: String,
}

impl UiState {
    /// Applies one event of the sub-agent answering the `task` call `parent_call_id`: its tool
    /// calls count towards its progress row (a background sub-agent has none: its call has
    /// returned), its warnings are shown; the rest stays behind.
    pub(super) fn subagent_event(
        &mut self,
        parent_call_id: String,
        agent_id: &str,
        kind: String,
        event: AgentEvent,
    ) {
        let background = self.background.iter().any(|row| row.agent_id == agent_id);
        if let AgentEvent::ToolCallStarted { call, summary } = event {
            if background {
                return;
            }
            let progress = self.subagents.entry(parent_call_id).or_insert_with(|| SubagentProgress {
                kind: kind.clone(),
                tool_calls: 0,
                last: None,
            });
            progress.tool_calls += 1;
            progress.last = Some(format!("{} {summary}", call.name));
        } else if let AgentEvent::Warning { message } = event {
            self.finish_stream();
            self.push_notice(NoticeKind::Warning, &format!("{kind} sub-agent: {message}"));
        }
    }

    /// A background sub-agent started (`running`) or ended: `/status` lists the running ones, and
    /// an end is announced.
    pub(super) fn background_event(&mut self, row: BackgroundRow, status: &str) {
        self.background.retain(|known| known.agent_id != row.agent_id);
        if status == "running" {
            self.background.push(row);
            return;
        }
        self.finish_stream();
        let what = match status {
            "killed" => "was stopped".to_string(),
            other => format!("{other}; its report goes to the model with the next request"),
        };
        let text =
            format!("background sub-agent {} ({}: {}) {what}", row.agent_id, row.kind, row.description);
        self.push_notice(NoticeKind::Info, &text);
    }

    /// The live row under the running call `call_id`, when a sub-agent works for it.
    pub fn subagent_row(&self, call_id: &str, width: usize) -> Option<Line<'static>> {
        let progress = self.subagents.get(call_id)?;
        let mut text =
            format!("{} · {} tool call{}", progress.kind, progress.tool_calls, plural(progress.tool_calls));
        if let Some(call) = &progress.last {
            text.push_str(&format!(" · {call}"));
        }
        Some(progress_line(&text, width))
    }

    /// The summary row for the finished call `call_id`, forgetting its sub-agent.
    pub(super) fn take_subagent_summary(&mut self, call_id: &str, width: usize) -> Option<Line<'static>> {
        let progress = self.subagents.remove(call_id)?;
        let text =
            format!("{} · {} tool call{}", progress.kind, progress.tool_calls, plural(progress.tool_calls));
        Some(progress_line(&text, width))
    }

    /// Shows the session's skills (`/skills`).
    pub(super) fn show_skills(&mut self) {
        let text = skills_text(&self.user_commands);
        self.push_notice(NoticeKind::Info, &text);
    }
}

/// The `/skills` listing: one line per skill, `/<name> — description`.
pub fn skills_text(commands: &[UserCommand]) -> String {
    let skills: Vec<&UserCommand> =
        commands.iter().filter(|command| command.kind == UserCommandKind::Skill).collect();
    if skills.is_empty() {
        return "No skills. A skill is a folder with a SKILL.md in .lathe/skills/, .claude/skills/ or \
                ~/.lathe/skills/, ~/.claude/skills/."
            .into();
    }
    let mut text = format!("Skills ({}; /<name> runs one, the model loads them by itself):", skills.len());
    for skill in skills {
        text.push_str(&format!("\n/{} — {}", skill.name, skill.description));
    }
    text
}

fn plural(count: u32) -> &'static str {
    if count == 1 { "" } else { "s" }
}

fn progress_line(text: &str, width: usize) -> Line<'static> {
    let prefix = "  ↳ ";
    let room = width.saturating_sub(prefix.chars().count());
    Line::from(vec![
        Span::styled(prefix, theme::dim()),
        Span::styled(truncate(&sanitize(text), room), theme::dim()),
    ])
}

#[cfg(test)]
#[path = "extensions_tests.rs"]
mod tests;
