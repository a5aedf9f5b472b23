//! Markdown (CommonMark with tables, strikethrough and task lists, via pulldown-cmark) rendered to
//! styled terminal rows of a given width.
//!
//! One call renders one self-contained piece of Markdown: the streaming collector
//! (`stream::MarkdownStream`) cuts a growing answer into such pieces at block boundaries. Prose is
//! word-wrapped with the prefixes of its containers (`│ ` for quotes, the list marker on an item's
//! first row and its width in spaces after); fenced code is highlighted (`highlight`) and wrapped at
//! any character so no code is lost; tables are laid out in columns and cut to fit.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::highlight::CodeHighlighter;
use super::table::Table;
use super::theme;
use super::wrap::{sanitize, str_width, wrap_chars, wrap_words};

/// The parser options every render uses.
fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Renders `source` to rows of at most `width` cells. Blocks are separated by one blank row; there
/// is no blank row before the first block or after the last.
pub fn render(source: &str, width: usize) -> Vec<Line<'static>> {
    let source = sanitize(source);
    let mut renderer = Renderer::new(width);
    for event in Parser::new_ext(&source, options()) {
        renderer.event(event);
    }
    renderer.finish()
}

enum Container {
    Quote,
    List { next: Option<u64> },
    Item { marker: String, used: bool },
}

struct Renderer {
    width: usize,
    out: Vec<Line<'static>>,
    last_blank: bool,
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    code: Option<(CodeHighlighter, String)>,
    links: Vec<(String, usize)>,
    table: Option<Table>,
}

impl Renderer {
    fn new(width: usize) -> Self {
        Renderer {
            width: width.max(1),
            out: Vec::new(),
            last_blank: true,
            inline: Vec::new(),
            styles: Vec::new(),
            containers: Vec::new(),
            code: None,
            links: Vec::new(),
            table: None,
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        self.flush_inline();
        if let Some((highlighter, rest)) = self.code.take() {
            self.code_lines(highlighter, &rest, true);
        }
        while self.out.last().is_some_and(|line| line.width() == 0) {
            self.out.pop();
        }
        self.out
    }

    fn style(&self) -> Style {
        self.styles.iter().fold(Style::default(), |acc, style| acc.patch(*style))
    }

    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let style = self.style();
        match self.inline.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.inline.push(Span::styled(text.to_string(), style)),
        }
    }

    /// The prefixes of the next row: (first row, continuation rows). Using them marks every list
    /// marker as shown, so later blocks of the same item are indented instead.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for container in &mut self.containers {
            match container {
                Container::Quote => {
                    first.push(Span::styled("│ ", theme::quote()));
                    rest.push(Span::styled("│ ", theme::quote()));
                }
                Container::List { .. } => {}
                Container::Item { marker, used } => {
                    let pad = " ".repeat(str_width(marker));
                    if *used {
                        first.push(Span::raw(pad.clone()));
                    } else {
                        first.push(Span::styled(marker.clone(), theme::dim()));
                        *used = true;
                    }
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn blank(&mut self) {
        if self.last_blank {
            return;
        }
        let bars: Vec<Span<'static>> = self
            .containers
            .iter()
            .filter(|c| matches!(c, Container::Quote))
            .map(|_| Span::styled("│", theme::quote()))
            .collect();
        self.out.push(Line::from(bars));
        self.last_blank = true;
    }

    fn push_rows(&mut self, rows: Vec<Line<'static>>) {
        if !rows.is_empty() {
            self.out.extend(rows);
            self.last_blank = false;
        }
    }

    fn flush_inline(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let line = Line::from(std::mem::take(&mut self.inline));
        let (first, rest) = self.prefixes();
        let rows = wrap_words(&line, self.width, &first, &rest);
        self.push_rows(rows);
    }

    /// Emits the complete lines of `text` (all of it when `last`), keeping a partial line.
    fn code_lines(&mut self, mut highlighter: CodeHighlighter, text: &str, last: bool) -> Option<String> {
        let mut rest = text;
        let mut rows = Vec::new();
        while let Some(end) = rest.find('\n') {
            let line = highlighter.line(&rest[..end]);
            let (first, cont) = self.prefixes();
            rows.extend(wrap_chars(&line, self.width, &first, &cont));
            rest = &rest[end + 1..];
        }
        if last && !rest.is_empty() {
            let line = highlighter.line(rest);
            let (first, cont) = self.prefixes();
            rows.extend(wrap_chars(&line, self.width, &first, &cont));
            rest = "";
        }
        self.push_rows(rows);
        if last {
            None
        } else {
            self.code = Some((highlighter, String::new()));
            Some(rest.to_string())
        }
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some(table) = &mut self.table
            && table.event(&event, &mut self.inline, &mut self.styles)
        {
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((highlighter, mut pending)) = self.code.take() {
                    pending.push_str(&text);
                    if let Some(rest) = self.code_lines(highlighter, &pending, false)
                        && let Some((_, buffer)) = &mut self.code
                    {
                        *buffer = rest;
                    }
                } else {
                    self.text(&text);
                }
            }
            Event::Code(code) => {
                let style = self.style().patch(theme::inline_code());
                self.inline.push(Span::styled(code.to_string(), style));
            }
            Event::InlineMath(math) | Event::DisplayMath(math) => self.text(&math),
            Event::Html(html) | Event::InlineHtml(html) => {
                for (i, part) in html.trim_end_matches('\n').split('\n').enumerate() {
                    if i > 0 {
                        self.flush_inline();
                    }
                    self.text(part);
                }
            }
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush_inline(),
            Event::Rule => {
                self.flush_inline();
                self.blank();
                let (first, _) = self.prefixes();
                let used: usize = first.iter().map(Span::width).sum();
                let mut row = first;
                row.push(Span::styled("─".repeat(self.width.saturating_sub(used).min(40)), theme::dim()));
                self.push_rows(vec![Line::from(row)]);
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.inline.push(Span::styled(mark, theme::dim()));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock | Tag::MetadataBlock(_) => {
                self.flush_inline();
                self.blank_unless_tight();
            }
            Tag::Heading { level, .. } => {
                self.flush_inline();
                self.blank();
                self.styles.push(theme::heading(heading_level(level)));
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.blank();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                self.blank_unless_tight();
                let info = match &kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((CodeHighlighter::new(&info), String::new()));
            }
            Tag::List(start) => {
                self.flush_inline();
                if !matches!(self.containers.last(), Some(Container::Item { .. })) {
                    self.blank();
                }
                self.containers.push(Container::List { next: start });
            }
            Tag::Item => {
                self.flush_inline();
                let depth = self.containers.iter().filter(|c| matches!(c, Container::List { .. })).count();
                let marker = match self.containers.last_mut() {
                    Some(Container::List { next: Some(n) }) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ => match depth {
                        0 | 1 => "• ".to_string(),
                        2 => "◦ ".to_string(),
                        _ => "▪ ".to_string(),
                    },
                };
                self.containers.push(Container::Item { marker, used: false });
            }
            Tag::Table(_) => {
                self.flush_inline();
                self.blank();
                self.table = Some(Table::default());
            }
            Tag::Emphasis => self.styles.push(Style::default().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::default().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.styles.push(Style::default().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.styles.push(Style::default()),
            Tag::Link { dest_url, .. } => {
                self.styles.push(theme::link());
                self.links.push((dest_url.to_string(), self.inline.len()));
            }
            Tag::Image { dest_url, .. } => {
                self.text("[image: ");
                self.links.push((dest_url.to_string(), self.inline.len()));
                self.styles.push(Style::default());
            }
            Tag::FootnoteDefinition(name) => {
                self.flush_inline();
                self.blank();
                self.text(&format!("[^{name}]: "));
            }
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.flush_inline();
            }
            Tag::TableHead | Tag::TableRow | Tag::TableCell => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock | TagEnd::MetadataBlock(_) => self.flush_inline(),
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.styles.pop();
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.last_blank = false;
            }
            TagEnd::CodeBlock => {
                if let Some((highlighter, rest)) = self.code.take() {
                    self.code_lines(highlighter, &rest, true);
                }
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.containers.pop();
            }
            TagEnd::Item => {
                self.flush_inline();
                if let Some(Container::Item { used: false, .. }) = self.containers.last() {
                    let (first, _) = self.prefixes();
                    self.push_rows(vec![Line::from(first)]);
                }
                self.containers.pop();
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some((url, from)) = self.links.pop() {
                    let text: String = self.inline[from.min(self.inline.len())..]
                        .iter()
                        .map(|span| span.content.as_ref())
                        .collect();
                    if !url.is_empty() && text != url && !url.starts_with('#') {
                        self.inline.push(Span::styled(format!(" ({url})"), theme::dim()));
                    }
                }
            }
            TagEnd::Image => {
                self.styles.pop();
                if let Some((url, _)) = self.links.pop() {
                    self.text(&format!("] ({url})"));
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let (first, _) = self.prefixes();
                    let rows = table.render(self.width, &first);
                    self.push_rows(rows);
                }
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => self.flush_inline(),
            TagEnd::TableHead | TagEnd::TableRow | TagEnd::TableCell => {}
        }
    }

    /// A blank row before a block, except for the first block of a list item (tight lists).
    fn blank_unless_tight(&mut self) {
        if let Some(Container::Item { used: false, .. }) = self.containers.last() {
            return;
        }
        self.blank();
    }
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
