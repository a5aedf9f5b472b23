//! `grep{pattern, path?, glob?, case_insensitive?, context?, output_mode?, include_ignored?}`:
//! ripgrep semantics from ripgrep's own library crates.
//!
//! Order: compile the regex (`grep-regex`; an invalid one is an error naming it) → walk the path
//! by the search tools' shared rule (`walk.rs`: `.gitignore` honoured and hidden files skipped
//! unless `include_ignored`; a path naming a file or an ignored directory is searched; symlinks to
//! files searched, symlinked directories not entered and reported; `glob` as an `ignore` override)
//! in path order → search each file with `grep-searcher` (binary files skipped at the first NUL,
//! line numbers, context) → render in the requested mode. A matching line longer than
//! [`MAX_LINE_CHARS`] is shown as a window of at most that many characters around each match,
//! with the match's 1-based character column (`path:line:column: …window…`), so a match deep in a
//! minified file is visible and `read_file` can page to it. At most [`MAX_RESULTS`] results and
//! [`MAX_OUTPUT_BYTES`] of output; past that, the rest is only counted and the output says how
//! many more there were.

use std::io;
use std::path::Path;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::OverrideBuilder;
use schemars::JsonSchema;
use serde::Deserialize;

use super::walk::{Hidden, INCLUDE_IGNORED_HINT, Ignored, Kind, linked_dirs_note, walker};
use super::{blocking, io_reason};
use crate::context::ToolContext;
use crate::tool::{Access, Effect, Tool, ToolError, ToolOutput};

/// Results (lines, files or counts) shown at most.
pub const MAX_RESULTS: usize = 100;
/// Output bytes shown at most.
pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Characters shown of one line: a longer matching line is shown as windows of this size around
/// its matches, a longer context line is cut.
pub const MAX_LINE_CHARS: usize = 1_000;
/// Characters of a window shown before its match.
const WINDOW_LEAD_CHARS: usize = 200;

/// The `grep` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grep;

/// What `grep` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// `path:line:text` for each matching line (default).
    #[default]
    Content,
    /// The paths of matching files.
    Files,
    /// `path:count` per matching file.
    Count,
}

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepArgs {
    /// Regex (Rust syntax).
    pub pattern: String,
    /// File or directory to search (default: workspace).
    pub path: Option<String>,
    /// Only files matching this glob, e.g. "*.rs".
    pub glob: Option<String>,
    /// Ignore case.
    pub case_insensitive: Option<bool>,
    /// Context lines around each match.
    pub context: Option<u32>,
    /// content (default), files, or count.
    pub output_mode: Option<OutputMode>,
    /// Also gitignored and hidden files.
    pub include_ignored: Option<bool>,
}

impl Tool for Grep {
    type Args = GrepArgs;

    fn name(&self) -> &'static str {
        "grep"
    }

    fn description(&self) -> &'static str {
        "Search file contents with a regex (ripgrep: respects .gitignore, skips hidden and binary files \
         unless include_ignored). Output: path:line:text lines, files, or counts; at most 100 results."
    }

    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }

    fn access(&self, args: &GrepArgs, ctx: &ToolContext) -> Access {
        Access::Read(vec![args.path.as_deref().map_or_else(|| ctx.workspace.clone(), |p| ctx.resolve(p))])
    }

    async fn run(&self, args: GrepArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let root = match &args.path {
            Some(p) => ctx.resolve(p),
            None => ctx.workspace.clone(),
        };
        let shown_root = ctx.display_path(&root);
        tokio::fs::metadata(&root)
            .await
            .map_err(|e| ToolError::Failed(format!("grep: cannot search {shown_root}: {}", io_reason(&e))))?;
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive.unwrap_or(false))
            .line_terminator(Some(b'\n'))
            .build(&args.pattern)
            .map_err(|e| ToolError::Failed(format!("grep: invalid regex {:?}: {e}", args.pattern)))?;
        let ignored = Ignored::from_flag(args.include_ignored);
        let (mut walk, denied) = walker(&root, Hidden::Skip, ignored, ctx.policy.clone(), "grep");
        walk.sort_by_file_path(|a, b| a.cmp(b));
        if let Some(glob) = &args.glob {
            let mut overrides = OverrideBuilder::new(&root);
            overrides
                .add(glob)
                .map_err(|e| ToolError::Failed(format!("grep: invalid glob {glob:?}: {e}")))?;
            let overrides = overrides
                .build()
                .map_err(|e| ToolError::Failed(format!("grep: invalid glob {glob:?}: {e}")))?;
            walk.overrides(overrides);
        }
        let mode = args.output_mode.unwrap_or_default();
        let context = args.context.unwrap_or(0).min(50) as usize;
        let cancel = ctx.cancel.clone();
        let workspace = ctx.workspace.clone();
        let report = blocking(ctx, move || {
            let mut searcher = SearcherBuilder::new()
                .binary_detection(BinaryDetection::quit(0))
                .line_number(true)
                .before_context(if mode == OutputMode::Content { context } else { 0 })
                .after_context(if mode == OutputMode::Content { context } else { 0 })
                .build();
            let mut report = Report::new(mode);
            for entry in walk.build() {
                if cancel.is_cancelled() {
                    break;
                }
                let Ok(entry) = entry else { continue };
                match Kind::of(&entry) {
                    Kind::File | Kind::LinkToFile(_) => {}
                    // The search root itself was named: it is entered, not reported.
                    Kind::LinkToDir(_) if entry.depth() == 0 => continue,
                    Kind::LinkToDir(target) => {
                        report.linked_dirs.push((display(&workspace, entry.path()), target));
                        continue;
                    }
                    Kind::Dir | Kind::BrokenLink(_) => continue,
                }
                let shown = display(&workspace, entry.path());
                let mut sink = FileSink::new(&mut report, &matcher, shown, context > 0);
                if let Err(e) = searcher.search_path(&matcher, entry.path(), &mut sink) {
                    tracing::debug!(path = %entry.path().display(), error = %e, "grep: skipped a file");
                }
                sink.finish();
            }
            report
        })
        .await?;
        let mut out = report.render(&args.pattern, &shown_root);
        if report.shown == 0 && report.omitted == 0 && ignored == Ignored::Skip && meta_is_dir(&root).await {
            out.push_str(&format!(
                " Files ignored by .gitignore and hidden files were not searched; {INCLUDE_IGNORED_HINT}."
            ));
        }
        for note in linked_dirs_note(&report.linked_dirs).into_iter().chain(denied.note()) {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&note);
            out.push('\n');
        }
        Ok(ToolOutput::text(out))
    }
}

async fn meta_is_dir(path: &Path) -> bool {
    tokio::fs::metadata(path).await.is_ok_and(|meta| meta.is_dir())
}

fn display(workspace: &Path, path: &Path) -> String {
    match path.strip_prefix(workspace) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// Everything found so far, and how much of it fits in the output.
struct Report {
    mode: OutputMode,
    lines: Vec<String>,
    bytes: usize,
    shown: usize,
    omitted: usize,
    capped: bool,
    /// Symlinked directories the walk did not enter (shown path, target).
    linked_dirs: Vec<(String, std::path::PathBuf)>,
}

impl Report {
    fn new(mode: OutputMode) -> Report {
        Report {
            mode,
            lines: Vec::new(),
            bytes: 0,
            shown: 0,
            omitted: 0,
            capped: false,
            linked_dirs: Vec::new(),
        }
    }

    /// Counts one result and shows `line` if there is still room.
    fn result(&mut self, line: String) {
        if !self.capped && self.shown < MAX_RESULTS && self.bytes + line.len() < MAX_OUTPUT_BYTES {
            self.push(line);
            self.shown += 1;
        } else {
            self.capped = true;
            self.omitted += 1;
        }
    }

    /// Shows a context or separator line, unless the output is already capped.
    fn extra(&mut self, line: String) {
        if !self.capped && self.bytes + line.len() < MAX_OUTPUT_BYTES {
            self.push(line);
        }
    }

    fn push(&mut self, line: String) {
        self.bytes += line.len() + 1;
        self.lines.push(line);
    }

    fn render(&self, pattern: &str, root: &str) -> String {
        if self.shown == 0 && self.omitted == 0 {
            return format!("No matches for {pattern:?} in {root}.");
        }
        let mut out = self.lines.join("\n");
        out.push('\n');
        if self.omitted > 0 {
            let what = match self.mode {
                OutputMode::Content => "matching lines",
                OutputMode::Files | OutputMode::Count => "files",
            };
            out.push_str(&format!(
                "[{} more {what} not shown (limit {MAX_RESULTS} results / 256 KiB); narrow the pattern, path or glob]\n",
                self.omitted
            ));
        }
        out
    }
}

/// Collects one file's matches into the [`Report`].
struct FileSink<'r> {
    report: &'r mut Report,
    matcher: &'r RegexMatcher,
    path: String,
    separators: bool,
    last_line: Option<u64>,
    count: usize,
}

impl<'r> FileSink<'r> {
    fn new(
        report: &'r mut Report,
        matcher: &'r RegexMatcher,
        path: String,
        separators: bool,
    ) -> FileSink<'r> {
        FileSink { report, matcher, path, separators, last_line: None, count: 0 }
    }

    /// A matching line too long to show whole: one `path:line:column: …window…` result per match
    /// not already inside the previous window.
    fn long_line(&mut self, number: Option<u64>, text: &str) {
        let mut starts = Vec::new();
        let _ = self.matcher.find_iter(text.as_bytes(), |m| {
            starts.push(m.start());
            true
        });
        let total = text.chars().count();
        let (mut counted_bytes, mut counted_chars) = (0usize, 0usize);
        let mut shown_until = 0usize;
        for start in starts {
            counted_chars += text[counted_bytes..start].chars().count();
            counted_bytes = start;
            if counted_chars < shown_until && shown_until > 0 {
                continue;
            }
            let lead =
                text[..start].char_indices().rev().take(WINDOW_LEAD_CHARS).last().map_or(start, |(i, _)| i);
            let lead_chars = text[lead..start].chars().count();
            let first = counted_chars - lead_chars;
            let end = text[lead..].char_indices().nth(MAX_LINE_CHARS).map_or(text.len(), |(i, _)| lead + i);
            let last = first + text[lead..end].chars().count();
            let before = if first > 0 { "…" } else { "" };
            let after = if last < total { "…" } else { "" };
            let line = match number {
                Some(n) => format!("{}:{n}:{}:", self.path, counted_chars + 1),
                None => format!("{}:{}:", self.path, counted_chars + 1),
            };
            self.report.result(format!(
                "{line} {before}{}{after} [line of {total} chars; showing {}-{last}]",
                &text[lead..end],
                first + 1
            ));
            shown_until = last;
        }
    }

    fn line(&mut self, number: Option<u64>, bytes: &[u8], sep: char) -> String {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let text = match text.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{} …[line cut]", &text[..cut]),
            None => text.to_string(),
        };
        match number {
            Some(n) => format!("{}{sep}{n}{sep}{text}", self.path),
            None => format!("{}{sep}{text}", self.path),
        }
    }

    /// A `--` before a line that does not follow the previous one (new group or new file), when
    /// context is shown — as ripgrep does.
    fn separate(&mut self, number: Option<u64>) {
        if !self.separators {
            return;
        }
        let contiguous = matches!((self.last_line, number), (Some(last), Some(n)) if n == last + 1);
        if !contiguous && !self.report.lines.is_empty() {
            self.report.extra("--".to_string());
        }
        self.last_line = number;
    }

    fn finish(self) {
        match self.report.mode {
            OutputMode::Content => {}
            OutputMode::Files if self.count > 0 => self.report.result(self.path),
            OutputMode::Count if self.count > 0 => {
                let line = format!("{}:{}", self.path, self.count);
                self.report.result(line);
            }
            OutputMode::Files | OutputMode::Count => {}
        }
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.count += 1;
        match self.report.mode {
            OutputMode::Content => {
                self.separate(m.line_number());
                let text = String::from_utf8_lossy(m.bytes());
                let text = text.trim_end_matches(['\n', '\r']);
                if text.chars().nth(MAX_LINE_CHARS).is_some() {
                    self.long_line(m.line_number(), text);
                } else {
                    let line = self.line(m.line_number(), m.bytes(), ':');
                    self.report.result(line);
                }
                Ok(true)
            }
            // One match is enough to list the file.
            OutputMode::Files => Ok(false),
            OutputMode::Count => Ok(true),
        }
    }

    fn context(&mut self, _searcher: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        if matches!(c.kind(), SinkContextKind::Other) {
            return Ok(true);
        }
        self.separate(c.line_number());
        let line = self.line(c.line_number(), c.bytes(), '-');
        self.report.extra(line);
        Ok(true)
    }
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
