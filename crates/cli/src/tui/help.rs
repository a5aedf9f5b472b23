//! The texts of `/help`, `/cost`, `/status`, `/jobs` and `/report`.

use lathe_core::host::JobSummary;
use lathe_protocol::PermissionMode;
use lathe_protocol::{RunReport, RunStats, UserCommand, UserCommandKind};
use ratatui::text::{Line, Span};

use super::extensions::BackgroundRow;
use super::slash::COMMANDS;
use super::state::SessionView;
use super::theme;
use super::wrap::wrap_words;

const KEYS: &[(&str, &str)] = &[
    ("enter", "send the prompt"),
    ("shift+enter, ctrl+j", "new line (or end the line with \\)"),
    ("↑ ↓", "earlier prompts (all sessions)"),
    ("tab", "complete /commands and @paths"),
    ("@path", "mention a file"),
    ("!command", "run a shell command yourself"),
    ("shift+tab", "cycle the permission mode"),
    ("esc, ctrl+c", "interrupt the model (esc also ends a /loop)"),
    ("ctrl+c twice, ctrl+d", "exit"),
];

/// `/help`: the commands, the session's custom commands (`user`; its skills are under `/skills`),
/// then the keys.
pub fn rows(width: usize, user: &[UserCommand]) -> Vec<Line<'static>> {
    let mut rows = vec![Line::from(Span::styled("Commands", theme::key()))];
    let name_width = COMMANDS.iter().map(|c| c.name.len() + c.argument.len() + 2).max().unwrap_or(0);
    for command in COMMANDS {
        let name = if command.argument.is_empty() {
            format!("/{}", command.name)
        } else {
            format!("/{} {}", command.name, command.argument)
        };
        rows.extend(entry(&name, name_width, command.description, width));
    }
    let custom: Vec<(String, &str)> = user
        .iter()
        .filter(|command| command.kind == UserCommandKind::Command)
        .map(|command| match &command.argument_hint {
            Some(hint) => (format!("/{} {hint}", command.name), command.description.as_str()),
            None => (format!("/{}", command.name), command.description.as_str()),
        })
        .collect();
    if !custom.is_empty() {
        rows.push(Line::default());
        rows.push(Line::from(Span::styled("Custom commands", theme::key())));
        let custom_width = custom.iter().map(|(name, _)| name.chars().count()).max().unwrap_or(0);
        for (name, description) in &custom {
            rows.extend(entry(name, custom_width, description, width));
        }
    }
    rows.push(Line::default());
    rows.push(Line::from(Span::styled("Keys", theme::key())));
    let key_width = KEYS.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
    for (key, what) in KEYS {
        rows.extend(entry(key, key_width, what, width));
    }
    rows.push(Line::default());
    rows
}

fn entry(name: &str, name_width: usize, description: &str, width: usize) -> Vec<Line<'static>> {
    let first = vec![Span::raw("  "), Span::styled(format!("{name:<name_width$}  "), theme::selected())];
    let rest = vec![Span::raw(" ".repeat(name_width + 4))];
    wrap_words(&Line::from(Span::styled(description.to_string(), theme::dim())), width, &first, &rest)
}

/// `/cost`: tokens and the estimated cost so far.
pub fn cost(totals: &RunStats) -> String {
    format!(
        "this session: {} input tokens ({} cache read, {} cache write), {} output tokens, {} model requests, \
         {} tool calls, estimated ${:.4}",
        totals.input_tokens,
        totals.cache_read_tokens,
        totals.cache_write_tokens,
        totals.output_tokens,
        totals.turns,
        totals.tool_calls,
        totals.cost_usd
    )
}

/// `/status`: session, model, permission mode, sandbox, workspace, context, cost, and the
/// background jobs that still run and the background sub-agents running (a line each).
pub fn status(
    session: &SessionView,
    context_tokens: u64,
    totals: &RunStats,
    jobs: &[JobSummary],
    background: &[BackgroundRow],
) -> String {
    let context = match session.context_window {
        Some(window) if window > 0 => {
            format!("{context_tokens} of {window} tokens ({}%)", context_tokens * 100 / window)
        }
        _ => format!("{context_tokens} tokens"),
    };
    let running: Vec<&JobSummary> = jobs.iter().filter(|job| job.state.is_running()).collect();
    let jobs = match running.as_slice() {
        [] => "none running".to_string(),
        running => format!(
            "{} running ({}); /jobs lists them",
            running.len(),
            running.iter().map(|job| job.id.as_str()).collect::<Vec<_>>().join(", ")
        ),
    };
    let mut text = format!(
        "session {}\nmodel {} ({})\npermission mode {}\nsandbox {}\nworkspace {}\ncontext {context}\ncost ${:.4}\njobs {jobs}",
        session.session_id,
        session.model,
        session.provider,
        session.mode.map_or("", PermissionMode::as_str),
        session.sandbox,
        session.cwd,
        totals.cost_usd
    );
    for row in background {
        text.push_str(&format!(
            "\nbackground sub-agent {} ({}: {}) running",
            row.agent_id, row.kind, row.description
        ));
    }
    text
}

/// `/jobs`: the session's background jobs, one line each (id, state, age, command), or that there
/// are none.
pub fn jobs(jobs: &[JobSummary]) -> String {
    if jobs.is_empty() {
        return "no background jobs in this session (the model starts one with shell run_in_background; \
                each is stopped when the session ends)"
            .into();
    }
    let states: Vec<String> = jobs.iter().map(|job| job.state.label()).collect();
    let id_width = jobs.iter().map(|job| job.id.len()).max().unwrap_or(0);
    let state_width = states.iter().map(String::len).max().unwrap_or(0);
    let ages: Vec<String> = jobs.iter().map(|job| super::cells::format_elapsed(job.age)).collect();
    let age_width = ages.iter().map(String::len).max().unwrap_or(0);
    let mut text = String::from("background jobs (id, state, started ago, command):");
    for ((job, state), age) in jobs.iter().zip(&states).zip(&ages) {
        text.push_str(&format!(
            "\n  {:<id_width$}  {state:<state_width$}  {age:>age_width$}  {}",
            job.id,
            crate::print::cut(&job.command, 100)
        ));
    }
    text
}

/// `/report`: the session's run report ([`crate::report::lines`]), or that there is nothing in it.
pub fn report(report: &RunReport) -> String {
    let lines = crate::report::lines(report);
    if lines.is_empty() {
        return "report: nothing yet (no file changed, no command run, no claim without evidence)".into();
    }
    format!("report of this session:\n{}", lines.join("\n"))
}
