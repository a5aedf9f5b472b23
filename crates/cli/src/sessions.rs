//! `lathe sessions`: this directory's sessions, newest first, as a table or (`--json`) one JSON
//! array of the core's session summaries.

use chrono::{Local, TimeZone};
use lathe_core::SessionSummary;

/// Prints `sessions` as a table: id, start date, user turns, estimated cost, first prompt.
pub fn print_table(sessions: &[SessionSummary]) {
    if sessions.is_empty() {
        eprintln!("lathe: no sessions in this directory yet");
        return;
    }
    println!("{:<36}  {:<16}  {:>5}  {:>8}  first prompt", "id", "started", "turns", "cost");
    for session in sessions {
        let started = Local
            .timestamp_millis_opt(session.started_ms as i64)
            .single()
            .map_or_else(|| "?".to_string(), |time| time.format("%Y-%m-%d %H:%M").to_string());
        let prompt: String = session.first_prompt.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut shown: String = prompt.chars().take(60).collect();
        if prompt.chars().count() > 60 {
            shown.push('…');
        }
        let mut prompt = shown;
        if session.incomplete {
            prompt.push_str(" (incomplete)");
        }
        println!(
            "{:<36}  {started:<16}  {:>5}  {:>8}  {prompt}",
            session.id,
            session.turns,
            format!("${:.4}", session.cost_usd)
        );
    }
}

/// Prints `sessions` as one JSON array.
pub fn print_json(sessions: &[SessionSummary]) {
    println!("{}", serde_json::to_string(sessions).unwrap_or_else(|_| "[]".to_string()));
}
