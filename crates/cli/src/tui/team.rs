//! `/team`: the members of the team the session leads, their state and last activity; `/team
//! stop NAME` asks one to shut down; `/team coordinator on|off` switches coordinator mode. The
//! status line counts the teammates running.

use lathe_core::team::lead::{MateState, TeamHub};

use super::cells::NoticeKind;

/// What `/team ARGUMENT` shows.
pub fn command(hub: Option<&TeamHub>, argument: Option<&str>) -> (NoticeKind, String) {
    let Some(hub) = hub else {
        return (NoticeKind::Info, "no team: start Lathe with --teams to lead one".into());
    };
    let words: Vec<&str> = argument.unwrap_or_default().split_whitespace().collect();
    match words.as_slice() {
        [] => (NoticeKind::Info, list(hub)),
        ["stop", name] => match hub.stop(name) {
            Ok(text) => (NoticeKind::Info, text),
            Err(error) => (NoticeKind::Error, format!("/team stop: {error}")),
        },
        ["coordinator", on @ ("on" | "off")] => {
            hub.set_coordinator(*on == "on");
            let text = if *on == "on" {
                "coordinator mode on: the lead's tools are the team's, the board and read-only tools"
            } else {
                "coordinator mode off: the lead has all its tools again"
            };
            (NoticeKind::Info, text.into())
        }
        _ => (NoticeKind::Error, "usage: /team, /team stop NAME, /team coordinator on|off".into()),
    }
}

fn list(hub: &TeamHub) -> String {
    let members = hub.members();
    let mode = if hub.coordinator() { " (coordinator mode)" } else { "" };
    if members.is_empty() {
        return format!("no teammates yet{mode}: the model starts them with spawn_teammate");
    }
    let now = lathe_now_ms();
    let width = members.iter().map(|member| member.name.len()).max().unwrap_or(0);
    let mut text = format!("teammates{mode} (name, state, last activity, process, workspace):");
    for member in &members {
        let ago = std::time::Duration::from_millis(now.saturating_sub(member.last_activity_ms));
        text.push_str(&format!(
            "\n  {:<width$}  {:<8}  {:>6} ago  {}  {}",
            member.name,
            member.state.word(),
            super::cells::format_elapsed(ago),
            member.pid.map_or("-".to_string(), |pid| pid.to_string()),
            member.workspace.display()
        ));
    }
    text
}

/// `2 teammates` while any run; `None` otherwise.
pub fn running(hub: Option<&TeamHub>) -> Option<String> {
    let running = hub?
        .members()
        .iter()
        .filter(|member| matches!(member.state, MateState::Working | MateState::Idle | MateState::Stopping))
        .count();
    match running {
        0 => None,
        1 => Some("1 teammate".into()),
        n => Some(format!("{n} teammates")),
    }
}

fn lathe_now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
