//! The UI's styles in one place, in the terminal's own 16-color palette (so they follow the user's
//! light or dark color scheme); code highlighting is the one exception (see `highlight`).

use ratatui::style::{Color, Modifier, Style};

/// Secondary text: argument summaries, elapsed times, hints.
pub fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

/// Model reasoning.
pub fn reasoning() -> Style {
    Style::default().add_modifier(Modifier::DIM | Modifier::ITALIC)
}

/// The `›` marker and text of a user prompt in the transcript.
pub fn user() -> Style {
    Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

/// Inline `code`.
pub fn inline_code() -> Style {
    Style::default().fg(Color::Cyan)
}

/// A Markdown heading of `level` (1–6).
pub fn heading(level: u8) -> Style {
    match level {
        1 => Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        2 => Style::default().add_modifier(Modifier::BOLD),
        _ => Style::default().add_modifier(Modifier::BOLD | Modifier::ITALIC),
    }
}

/// A link's text.
pub fn link() -> Style {
    Style::default().fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
}

/// The bar and text of a block quote.
pub fn quote() -> Style {
    Style::default().fg(Color::Green)
}

/// A tool's name on its call line.
pub fn tool_name() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

/// Success marks.
pub fn ok() -> Style {
    Style::default().fg(Color::Green)
}

/// Failure marks and error text.
pub fn error() -> Style {
    Style::default().fg(Color::Red)
}

/// Warnings, denials, interruptions.
pub fn warning() -> Style {
    Style::default().fg(Color::Yellow)
}

/// An added line of a diff.
pub fn diff_added() -> Style {
    Style::default().fg(Color::Green)
}

/// A removed line of a diff.
pub fn diff_removed() -> Style {
    Style::default().fg(Color::Red)
}

/// The highlighted row of a list (completion, pickers).
pub fn selected() -> Style {
    Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

/// Frames and rules of the input box and dialogs.
pub fn border() -> Style {
    Style::default().fg(Color::DarkGray)
}

/// Key names in hints (`y`, `Esc`).
pub fn key() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}
