//! The interactive terminal UI (`lathe` in a terminal).
//!
//! ratatui + crossterm in an inline viewport: the transcript goes into the terminal's own
//! scrollback and stays there after exit; only the live part (streaming tail, running tools,
//! spinner, input, dialogs, status line) is redrawn. The model (`state`, `keys`) is separate from
//! the drawing (`view`, `terminal`), so tests render states to a ratatui `TestBackend`.

mod app;
mod burst;
mod cells;
mod completion;
mod dialog;
mod diff;
mod events;
mod extensions;
mod goals;
mod guard;
mod help;
mod highlight;
mod history;
mod input;
mod keys;
mod loops;
mod markdown;
mod picker;
mod plan;
mod question;
mod slash;
mod state;
mod stream;
mod table;
mod team;
mod terminal;
mod theme;
mod view;
mod wrap;

use std::io::{BufWriter, Write};

use lathe_core::host::{Flags, SessionChoice};
use ratatui::backend::CrosstermBackend;

use crate::args::{EXIT_FAILED, EXIT_USAGE};
use app::App;
use cells::NoticeKind;
use guard::TerminalGuard;
use terminal::InlineTerminal;

/// Runs the UI until the user quits; returns the exit status. `prompt` (from `lathe "…"`) is sent
/// as the first prompt; `--resume` without an id (`SessionChoice::Resume("")`) opens the picker.
pub async fn run(flags: Flags, prompt: Option<String>) -> u8 {
    let home = lathe_core::paths::lathe_home();
    let picker = flags.session == SessionChoice::Resume(String::new());
    let sessions = if picker {
        match lathe_core::host::list_sessions(&flags, None) {
            Ok(list) => Some(list),
            Err(error) => {
                eprintln!("lathe: error: {error}");
                return EXIT_USAGE;
            }
        }
    } else {
        None
    };
    let guard = match TerminalGuard::enter() {
        Ok(guard) => guard,
        Err(error) => {
            eprintln!("lathe: error: cannot set up the terminal: {error}");
            return EXIT_FAILED;
        }
    };
    highlight::prewarm();
    let backend = CrosstermBackend::new(BufWriter::with_capacity(64 * 1024, std::io::stdout()));
    let terminal = match InlineTerminal::new(backend, start_row()) {
        Ok(terminal) => terminal,
        Err(error) => {
            drop(guard);
            eprintln!("lathe: error: cannot read the terminal size: {error}");
            return EXIT_FAILED;
        }
    };
    let mut app = App::new(terminal, flags.clone(), &home);
    match sessions {
        Some(list) if !list.is_empty() => {
            app.pick_session(app::session_rows(list));
            if let Some(prompt) = &prompt {
                app.set_input(prompt);
            }
        }
        Some(_) => {
            app.notice(NoticeKind::Info, "No earlier sessions in this directory; starting a new one.");
            app.start(SessionChoice::New).await;
            app.submit_first(prompt.as_deref());
        }
        None => {
            app.start(flags.session.clone()).await;
            app.submit_first(prompt.as_deref());
        }
    }
    let code = app.run().await;
    app.finish();
    drop(guard);
    code
}

/// The row the viewport starts on: the cursor's row, or the next one when the cursor is not at
/// the start of a line (a prompt without a newline); the last row when the terminal does not say.
fn start_row() -> u16 {
    let height = crossterm::terminal::size().map_or(24, |(_, h)| h);
    match crossterm::cursor::position() {
        Ok((0, row)) => row,
        Ok((_, row)) => {
            let mut out = std::io::stdout();
            let _ = out.write_all(b"\r\n");
            let _ = out.flush();
            (row + 1).min(height.saturating_sub(1))
        }
        Err(_) => height.saturating_sub(1),
    }
}

/// `2026-11-30 18:04` (local time) for a time in milliseconds since the Unix epoch.
pub fn format_time(ms: u64) -> String {
    use chrono::TimeZone;
    match chrono::Local.timestamp_millis_opt(i64::try_from(ms).unwrap_or(0)) {
        chrono::LocalResult::Single(time) | chrono::LocalResult::Ambiguous(time, _) => {
            time.format("%Y-%m-%d %H:%M").to_string()
        }
        chrono::LocalResult::None => String::new(),
    }
}

#[cfg(test)]
mod screen_tests;
#[cfg(test)]
mod test_screen;
