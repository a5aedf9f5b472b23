//! Completion under the prompt: slash command names while the line is `/word`, and file paths
//! for the `@path` word under the cursor (listed from the workspace directory, one directory level
//! at a time; hidden entries only when the typed name starts with `.`).

use std::ops::Range;
use std::path::Path;

use lathe_protocol::UserCommand;
use ratatui::text::{Line, Span};

use super::input::InputEditor;
use super::slash;
use super::theme;
use super::wrap::truncate;

/// Candidates shown at once.
pub const VISIBLE: usize = 6;
/// Directory entries considered.
const MAX_ENTRIES: usize = 200;

/// One candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// What is shown.
    pub label: String,
    /// Shown dimmed after the label.
    pub detail: String,
    /// What replaces the completed range.
    pub replacement: String,
}

/// What is being completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    /// A slash command name (the whole line).
    Command,
    /// An `@path` word.
    Path,
}

/// The open completion list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// What is completed.
    pub kind: CompletionKind,
    /// The bytes of the input the chosen candidate replaces.
    pub range: Range<usize>,
    /// The candidates.
    pub candidates: Vec<Candidate>,
    /// Index of the selected candidate.
    pub selected: usize,
}

impl Completion {
    /// The completion for the editor's current text and cursor, if any applies; slash names are
    /// the built-in commands, then the session's commands and skills `user` (by name).
    pub fn for_input(input: &InputEditor, cwd: &Path, user: &[UserCommand]) -> Option<Completion> {
        let text = input.text();
        let cursor = input.cursor();
        if let Some(name) = text.strip_prefix('/')
            && cursor == text.len()
            && !name.contains(char::is_whitespace)
        {
            let mut candidates: Vec<Candidate> = slash::complete(name)
                .into_iter()
                .map(|command| Candidate {
                    label: format!("/{}", command.name),
                    detail: if command.argument.is_empty() {
                        command.description.to_string()
                    } else {
                        format!("{} — {}", command.argument, command.description)
                    },
                    replacement: format!("/{}", command.name),
                })
                .collect();
            let builtin = |wanted: &str| slash::COMMANDS.iter().any(|command| command.name == wanted);
            candidates.extend(
                user.iter().filter(|command| command.name.starts_with(name) && !builtin(&command.name)).map(
                    |command| Candidate {
                        label: format!("/{}", command.name),
                        detail: match &command.argument_hint {
                            Some(hint) => format!("{hint} — {}", command.description),
                            None => command.description.clone(),
                        },
                        replacement: format!("/{}", command.name),
                    },
                ),
            );
            // A name typed in full is chosen over longer names it begins (`/mode` over `/model`).
            if let Some(exact) = candidates.iter().position(|c| c.replacement == text) {
                let candidate = candidates.remove(exact);
                candidates.insert(0, candidate);
            }
            return (!candidates.is_empty()).then_some(Completion {
                kind: CompletionKind::Command,
                range: 0..text.len(),
                candidates,
                selected: 0,
            });
        }
        let start = text[..cursor].rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &text[start..cursor];
        let typed = word.strip_prefix('@')?;
        let candidates = paths(cwd, typed);
        // A complete file name needs no list.
        if let [only] = candidates.as_slice()
            && only.replacement == format!("{word} ").trim_end()
            && !only.replacement.ends_with('/')
        {
            return None;
        }
        (!candidates.is_empty()).then_some(Completion {
            kind: CompletionKind::Path,
            range: start..cursor,
            candidates,
            selected: 0,
        })
    }

    /// Moves the selection by `delta`, wrapping around.
    pub fn step(&mut self, delta: isize) {
        let count = self.candidates.len() as isize;
        if count > 0 {
            self.selected = ((self.selected as isize + delta).rem_euclid(count)) as usize;
        }
    }

    /// The selected candidate.
    pub fn chosen(&self) -> Option<&Candidate> {
        self.candidates.get(self.selected)
    }

    /// The list's rows at `width` cells.
    pub fn rows(&self, width: usize) -> Vec<Line<'static>> {
        let first = self.selected.saturating_sub(VISIBLE - 1);
        let label_width =
            self.candidates.iter().map(|c| c.label.chars().count()).max().unwrap_or(0).min(width / 2);
        self.candidates
            .iter()
            .enumerate()
            .skip(first)
            .take(VISIBLE)
            .map(|(index, candidate)| {
                let style = if index == self.selected { theme::selected() } else { theme::dim() };
                let label = truncate(&candidate.label, label_width);
                let padded = format!("  {label:<label_width$}  ");
                let room = width.saturating_sub(padded.chars().count());
                Line::from(vec![
                    Span::styled(padded, style),
                    Span::styled(truncate(&candidate.detail, room), theme::dim()),
                ])
            })
            .collect()
    }
}

/// Entries of the directory part of `typed` whose names start with its last part.
fn paths(cwd: &Path, typed: &str) -> Vec<Candidate> {
    let (directory, prefix) = match typed.rfind('/') {
        Some(slash) => (&typed[..=slash], &typed[slash + 1..]),
        None => ("", typed),
    };
    let base =
        if directory.starts_with('/') { Path::new(directory).to_path_buf() } else { cwd.join(directory) };
    // The walk rule of list_dir, glob and grep: ignored and hidden entries left out (hidden ones
    // offered once a dot is typed), a link to a directory offered as a directory.
    let found: Vec<(bool, String)> = lathe_core::host::dir_entries(&base, prefix.starts_with('.'))
        .into_iter()
        .filter(|entry| entry.name.starts_with(prefix))
        .take(MAX_ENTRIES)
        .map(|entry| (entry.is_dir, entry.name))
        .collect();
    found
        .into_iter()
        .map(|(is_dir, name)| {
            let suffix = if is_dir { "/" } else { "" };
            Candidate {
                label: format!("{directory}{name}{suffix}"),
                detail: String::new(),
                replacement: format!("@{directory}{name}{suffix}"),
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "completion_tests.rs"]
mod tests;
