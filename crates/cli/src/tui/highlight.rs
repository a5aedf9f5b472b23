//! Syntax highlighting of code blocks (syntect's bundled grammars with the Oniguruma regex engine, the
//! engine the grammars are written for: its compiled patterns take a fraction of the memory of the
//! pure-Rust engine's, which kept the UI over 70 MB after 200 answers with code).
//!
//! The grammar set is loaded once, on first use; [`prewarm`] starts that load on a background thread
//! when the UI opens so the first code block does not pay for it. A [`CodeHighlighter`] keeps the
//! parser state between lines, so a streamed block is highlighted line by line as each line
//! completes and no line is ever highlighted twice. Only foreground colors are used: the terminal's
//! own background stays. An unknown language (or none) gives plain text.

use std::sync::LazyLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);

static THEME: LazyLock<Theme> = LazyLock::new(|| {
    let mut themes = ThemeSet::load_defaults().themes;
    themes.remove("base16-ocean.dark").unwrap_or_default()
});

/// A few typical lines per common language: highlighting them compiles the grammar's common
/// patterns (syntect compiles each pattern on first use, ~100 ms for a language's first block).
const SAMPLES: &[(&str, &str)] = &[
    (
        "rust",
        "use std::io;\n/// Doc.\npub fn f<'a>(x: &'a str) -> Option<u32> { let s = \"a\"; x.parse().ok() } // c\n",
    ),
    ("python", "import os\ndef f(x: int) -> str:\n    return f\"{x}\" # c\nclass A(B): pass\n"),
    ("js", "import x from 'y';\nconst f = async (a) => { return `${a}`; }; // c\nclass A extends B {}\n"),
    ("bash", "#!/bin/sh\nfor f in *.rs; do echo \"$f\" | grep -q x && exit 1; done # c\n"),
    ("json", "{\"a\": [1, 2.5, true, null, \"s\"]}\n"),
    ("go", "package main\nfunc f(x int) (string, error) { return fmt.Sprintf(\"%d\", x), nil } // c\n"),
    ("c", "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 1); return 0; } /* c */\n"),
    ("diff", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"),
];

/// Loads the grammars and the theme, and highlights sample code of common languages, on a
/// background thread, so the first code block of an answer does not stall a frame.
pub fn prewarm() {
    let _ = std::thread::Builder::new().name("highlight-load".into()).spawn(|| {
        for (language, sample) in SAMPLES {
            let mut highlighter = CodeHighlighter::new(language);
            for line in sample.lines() {
                let _ = highlighter.line(line);
            }
        }
    });
}

/// Highlights the lines of one code block, in order.
pub struct CodeHighlighter {
    inner: Option<HighlightLines<'static>>,
}

impl CodeHighlighter {
    /// A highlighter for the fence's info string (`rust`, `py`, `sh`, `rust,ignore`, …).
    pub fn new(info: &str) -> Self {
        let token = info.split([',', ' ', '{']).next().unwrap_or("").trim();
        let token = match token {
            "" => return CodeHighlighter { inner: None },
            "sh" | "shell" | "zsh" | "console" => "bash",
            "ts" | "typescript" | "tsx" | "jsx" => "js",
            other => other,
        };
        let inner = SYNTAXES.find_syntax_by_token(token).map(|syntax| HighlightLines::new(syntax, &THEME));
        CodeHighlighter { inner }
    }

    /// Highlights one line (without its newline) and advances the parser state.
    pub fn line(&mut self, text: &str) -> Line<'static> {
        let Some(inner) = &mut self.inner else {
            return Line::from(text.to_string());
        };
        let with_newline = format!("{text}\n");
        match inner.highlight_line(&with_newline, &SYNTAXES) {
            Ok(regions) => {
                let spans: Vec<Span<'static>> = regions
                    .into_iter()
                    .filter_map(|(style, piece)| {
                        let piece = piece.trim_end_matches('\n');
                        (!piece.is_empty()).then(|| Span::styled(piece.to_string(), convert(style)))
                    })
                    .collect();
                Line::from(spans)
            }
            // A grammar error must not lose the line: show it plain from here on.
            Err(_) => {
                self.inner = None;
                Line::from(text.to_string())
            }
        }
    }
}

fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_language_is_known() {
        for (language, _) in SAMPLES {
            assert!(CodeHighlighter::new(language).inner.is_some(), "{language}");
        }
    }
}
