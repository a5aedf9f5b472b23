//! The `edit_file` grammar: edits that always apply.
//!
//! A small model copying `old_string` from a line-numbered `read_file` result gets it wrong often
//! (line numbers kept, indentation lost, a word changed), and every such edit fails. With the
//! current content of the files the model has read, the grammar only allows a `path` among those
//! files and an `old_string` that is one to [`MAX_EDIT_LINES`] consecutive whole lines of that
//! file starting at a line that occurs exactly once in it — so every `old_string` it admits is
//! unique and present, and the edit applies:
//!
//! ```text
//! edit      ::= "{" ( "\"path\": \"a.py\", \"old_string\": " e0-old | … ) ", \"new_string\": " string "}"
//! e0-old    ::= "\"" ( e0-l3-r4 | e0-l7-r4 | … ) "\""    (lines occurring once in a.py)
//! e0-lI-rK  ::= "<line I, JSON-escaped>" ( "\\n" e0-l(I+1)-r(K-1) )?      (e0-lI-r1: the line alone)
//! ```
//!
//! The rules grow linearly with the file (a range is a start line and a bounded continuation).

use super::literal;
use super::schema::Builder;

/// Lines one `old_string` may span: small edits are the ones a small model gets right (given the
/// whole file, it rewrites it and drops what it did not mean to touch).
pub const MAX_EDIT_LINES: usize = 4;

/// Files larger than this are left out (their edits fall back to the plain schema).
pub const MAX_FILE_BYTES: usize = 32 * 1024;

/// A file the model has read in this conversation, with its content now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditTarget {
    /// The path as the model wrote it in its calls (relative to the workspace or absolute).
    pub path: String,
    /// The file's current content (UTF-8, LF line endings).
    pub content: String,
    /// Lines that may not start an `old_string`, unless no other line could: the first lines of
    /// this turn's failed edits of the file (a small model retries the anchor that failed).
    pub avoid: Vec<String>,
}

impl EditTarget {
    /// Whether the grammar can describe edits of this file: at most [`MAX_FILE_BYTES`], LF line
    /// endings, and at least one line that occurs exactly once.
    pub fn editable(&self) -> bool {
        self.content.len() <= MAX_FILE_BYTES
            && !self.content.contains('\r')
            && lines(&self.content).iter().any(|line| unique_start(&self.content, line))
    }
}

/// The lines of `content` (a final newline does not start an empty line).
fn lines(content: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = content.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// Whether an `old_string` may start with `line`: it is not blank and occurs once in `content`.
fn unique_start(content: &str, line: &str) -> bool {
    !line.trim().is_empty() && content.matches(line).count() == 1
}

/// `text` as it appears inside a JSON string written by [`crate::pyjson`] (no quotes).
fn json_inner(text: &str) -> String {
    let quoted = crate::pyjson::to_string(text);
    quoted[1..quoted.len() - 1].to_string()
}

/// Adds the rules for `edit_file` arguments over `targets` (the editable ones) and returns the
/// rule name; `None` when no target is editable (the tool is then left out of the grammar).
pub(crate) fn edit_args_rule(builder: &mut Builder, targets: &[EditTarget]) -> Option<String> {
    let mut alternatives = Vec::new();
    for (index, target) in targets.iter().filter(|target| target.editable()).enumerate() {
        let lines = lines(&target.content);
        let span = MAX_EDIT_LINES.min(lines.len());
        // `eF-lI-rK`: line I followed by at most K-1 more lines. Built from the last line back
        // and from short spans to long ones, so each continuation is already named.
        let name = |i: usize, k: usize| format!("e{index}-l{i}-r{k}");
        let mut starts = Vec::new();
        for (i, line) in lines.iter().enumerate().rev() {
            let text = json_inner(line);
            for k in 1..=span {
                let next = (k > 1 && i + 1 < lines.len())
                    .then(|| format!("( {} {} )?", literal(r"\n"), name(i + 1, k - 1)));
                let body = match (text.is_empty(), next) {
                    (false, Some(next)) => format!("{} {next}", literal(&text)),
                    (false, None) => literal(&text),
                    (true, Some(next)) => next,
                    (true, None) => literal(""),
                };
                builder.named(&name(i, k), &body);
            }
            if unique_start(&target.content, line) {
                starts.push((name(i, span), target.avoid.iter().any(|avoid| avoid == line)));
            }
        }
        starts.reverse();
        let fresh: Vec<String> =
            starts.iter().filter(|(_, avoid)| !avoid).map(|(name, _)| name.clone()).collect();
        let starts =
            if fresh.is_empty() { starts.into_iter().map(|(name, _)| name).collect() } else { fresh };
        let old = builder.named(
            &format!("e{index}-old"),
            &format!("{quote} ( {} ) {quote}", starts.join(" | "), quote = literal("\"")),
        );
        let head = format!("\"path\": {}, \"old_string\": ", crate::pyjson::to_string(target.path.as_str()));
        alternatives.push(format!("{} {old}", literal(&head)));
    }
    if alternatives.is_empty() {
        return None;
    }
    let string = builder.primitive("string");
    Some(builder.named(
        "edit-file-args",
        &format!(
            "{} ( {} ) {} {string} {}",
            literal("{"),
            alternatives.join(" | "),
            literal(", \"new_string\": "),
            literal("}")
        ),
    ))
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
