//! Syntax checks of source files after an edit, with tree-sitter grammars (today Python: `.py`,
//! `.pyi`). A file that parsed before an edit and does not after it is what a model that glues two
//! lines together or drops half a block leaves behind; `edit_file` points it out (or refuses it,
//! for models that do not repair what they break).
//!
//! tree-sitter recovers from errors instead of stopping, marking the span it could not fit as an
//! `ERROR` node or inserting a zero-width `MISSING` node; the first such node in document order is
//! the error reported. It does not check indentation the way CPython does: an unexpected indent or
//! a body left unindented parses, so those are not found. Files larger than [`MAX_CHECKED_BYTES`]
//! are not checked. [`first_unreachable`] finds a definition after a block's `return` (a function
//! added inside the one above it).

use std::path::Path;

/// Larger texts are not parsed: a parse of ordinary code takes milliseconds, but error recovery
/// on pathological input (thousands of unclosed brackets) can take seconds per MiB.
pub const MAX_CHECKED_BYTES: usize = 256 * 1024;

/// A language Lathe can check, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Python 3 (tree-sitter-python).
    Python,
}

impl Language {
    /// The language of `path` by its extension; `None` for files Lathe does not check.
    pub fn of(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "py" | "pyi" => Some(Self::Python),
            _ => None,
        }
    }

    /// The language's name as a user would write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Python => "Python",
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Self::Python => tree_sitter_python::LANGUAGE.into(),
        }
    }
}

/// Where a text stops parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// Byte offset in the text (0-based).
    pub byte: usize,
    /// What went wrong: ``unexpected `…` `` (the text tree-sitter could not fit, first 40
    /// characters) or ``missing `)` ``.
    pub what: String,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.what)
    }
}

/// The syntax tree of `text`; `None` when it is larger than [`MAX_CHECKED_BYTES`] or the parser
/// could not run.
fn parse(language: Language, text: &str) -> Option<tree_sitter::Tree> {
    if text.len() > MAX_CHECKED_BYTES {
        return None;
    }
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language.grammar()).ok()?;
    parser.parse(text, None)
}

/// The first syntax error of `text` in `language`; `None` when it parses, is larger than
/// [`MAX_CHECKED_BYTES`], or the parser could not run.
pub fn first_error(language: Language, text: &str) -> Option<SyntaxError> {
    let tree = parse(language, text)?;
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut node = root;
    // Descend to the first ERROR or MISSING node: the first child that holds an error, each time.
    loop {
        if node.is_error() || node.is_missing() {
            break;
        }
        let mut cursor = node.walk();
        let next = node.children(&mut cursor).find(|child| child.has_error());
        match next {
            Some(child) => node = child,
            None => break,
        }
    }
    let start = node.start_position();
    let line_text = text.lines().nth(start.row).unwrap_or("");
    let column = line_text.get(..start.column).map_or(start.column, |head| head.chars().count()) + 1;
    let what = if node.is_missing() {
        format!("missing `{}`", node.kind())
    } else {
        let span = text.get(node.start_byte()..node.end_byte()).unwrap_or("");
        let shown: String = span.trim().lines().next().unwrap_or("").chars().take(40).collect();
        if shown.is_empty() { "unexpected end of input".to_string() } else { format!("unexpected `{shown}`") }
    };
    Some(SyntaxError { line: start.row + 1, column, byte: node.start_byte(), what })
}

/// The error an edit introduced: `path` is in a checked language, `before` parsed and `after` does
/// not. A file that was already broken is not reported (the edit may be a step of its repair).
/// `edited_at` is the byte offset in `after` where the replaced text starts: tree-sitter may blame
/// the enclosing block (an `else` left without its `if` marks the whole `def`), so an error found
/// before the edit is reported at the edit's first line instead.
pub fn broken_by_edit(
    path: &Path,
    before: &str,
    after: &str,
    edited_at: usize,
) -> Option<(Language, SyntaxError)> {
    let language = Language::of(path)?;
    let error = first_error(language, after)?;
    if first_error(language, before).is_some() {
        return None;
    }
    if error.byte >= edited_at {
        return Some((language, error));
    }
    let mut edited_at = edited_at.min(after.len());
    while !after.is_char_boundary(edited_at) {
        edited_at -= 1;
    }
    let head = &after[..edited_at];
    let line = head.matches('\n').count() + 1;
    let column = head.rsplit('\n').next().map_or(0, |start| start.chars().count()) + 1;
    let what = format!("the edited lines do not fit the code around them ({})", error.what);
    Some((language, SyntaxError { line, column, byte: edited_at, what }))
}

/// The first function or class definition of `text` that can never run: it follows a `return`,
/// `raise`, `break` or `continue` in the same block (comments aside): a function added inside the
/// one above it. (Other dead code is left alone: a small model's fix that puts a new `return`
/// above the old one works.) `what` names the statement and, when the block
/// is a function's body, the function (`def product_of(a, b):` after the `return` of `label`).
pub fn first_unreachable(language: Language, text: &str) -> Option<SyntaxError> {
    let tree = parse(language, text)?;
    let mut cursor = tree.walk();
    let mut found: Option<tree_sitter::Node> = None;
    // Depth-first, in document order: the first block with a statement after a jump.
    'walk: loop {
        let node = cursor.node();
        if node.kind() == "block" {
            let mut children = node.walk();
            let mut jumped = false;
            for child in node.named_children(&mut children).filter(|child| child.kind() != "comment") {
                if jumped
                    && matches!(
                        child.kind(),
                        "function_definition" | "class_definition" | "decorated_definition"
                    )
                {
                    found = Some(child);
                    break 'walk;
                }
                jumped = matches!(
                    child.kind(),
                    "return_statement" | "raise_statement" | "break_statement" | "continue_statement"
                );
            }
        }
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                break 'walk;
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
    let node = found?;
    let start = node.start_position();
    let shown: String = text.lines().nth(start.row).unwrap_or("").trim().chars().take(40).collect();
    let owner = node
        .parent()
        .and_then(|block| block.parent())
        .filter(|owner| owner.kind() == "function_definition")
        .and_then(|function| function.child_by_field_name("name"))
        .and_then(|name| text.get(name.start_byte()..name.end_byte()));
    let what = match owner {
        Some(function) => format!("`{shown}` comes after the end of {function}'s body and is never defined"),
        None => format!("`{shown}` comes after a return, raise, break or continue and is never defined"),
    };
    Some(SyntaxError { line: start.row + 1, column: start.column + 1, byte: node.start_byte(), what })
}

/// The unreachable statement an edit introduced ([`first_unreachable`]): `path` is in a checked
/// language and `before` had none.
pub fn unreachable_by_edit(path: &Path, before: &str, after: &str) -> Option<(Language, SyntaxError)> {
    let language = Language::of(path)?;
    let found = first_unreachable(language, after)?;
    first_unreachable(language, before).is_none().then_some((language, found))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn valid_python_has_no_error() {
        let text = "def sum_to(n):\n    total = 0\n    for i in range(1, n + 1):\n        total += i\n    return total\n";
        assert_eq!(first_error(Language::Python, text), None);
    }

    #[test]
    fn two_statements_glued_on_one_line_are_found_where_they_meet() {
        // The 1.5B local model's off-by-one "fix": the body appended to the docstring's line.
        let text = "def sum_to(n):\n    \"\"\"Return 1 + 2 + ... + n.\"\"\"total = 0\nfor i in range(1, n + 1):\n    total += i\nreturn total\n    total = 0\n";
        let error = first_error(Language::Python, text).expect("an error");
        assert_eq!(error.line, 2, "{error}");
    }

    #[test]
    fn an_unclosed_call_reports_what_is_missing_or_unexpected() {
        let error = first_error(Language::Python, "print(greet(\"world\")\nx = 1\n").expect("an error");
        assert_eq!(error.line, 1, "{error}");
        assert!(error.what.starts_with("missing") || error.what.starts_with("unexpected"), "{error}");
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // `+` is byte 9 but character 8.
        let error = first_error(Language::Python, "é = (1 +)\n").expect("an error");
        assert_eq!((error.line, error.column, error.what.as_str()), (1, 8, "unexpected `+`"), "{error}");
    }

    #[test]
    fn only_a_file_that_parsed_before_is_reported_as_broken_by_an_edit() {
        let good = "x = 1\n";
        let bad = "x = (1\n";
        let path = Path::new("a/b.py");
        assert!(broken_by_edit(path, good, bad, 0).is_some());
        assert!(broken_by_edit(path, bad, bad, 0).is_none(), "already broken before");
        assert!(broken_by_edit(path, good, good, 0).is_none());
        assert!(broken_by_edit(Path::new("notes.txt"), good, bad, 0).is_none(), "not a checked language");
        assert_eq!(Language::of(Path::new("stubs.pyi")), Some(Language::Python));
        assert_eq!(Language::of(Path::new("Makefile")), None);
    }

    #[test]
    fn an_error_blamed_on_the_enclosing_block_is_reported_where_the_edit_starts() {
        let before = "def sign(x):\n    y = abs(x)\n    if x < 0:\n        r = -1\n    else:\n        r = 1\n    return r\n";
        // The edit drops the `if` line: tree-sitter marks the whole `def` (line 1).
        let after = before.replace("    if x < 0:\n        r = -1", "    r = -1");
        let edited_at = after.find("    r = -1").unwrap_or(0);
        let (_, error) = broken_by_edit(Path::new("s.py"), before, &after, edited_at).expect("broken");
        assert_eq!((error.line, error.column), (3, 1), "{error}");
        assert!(error.what.starts_with("the edited lines do not fit the code around them"), "{error}");
    }

    #[test]
    fn oversized_texts_are_not_parsed() {
        let text = "(".repeat(MAX_CHECKED_BYTES + 1);
        assert_eq!(first_error(Language::Python, &text), None);
    }

    #[test]
    fn a_function_added_inside_the_one_above_it_is_unreachable() {
        let before = "def label(code):\n    return str(code)\n\n\ndef limit():\n    return 80\n";
        // The 1.5B model's "added" function: indented under the previous one's return.
        let after = before.replace(
            "return str(code)\n",
            "return str(code)\n\n    def product_of(a, b):\n        return a * b\n",
        );
        let (_, found) = unreachable_by_edit(Path::new("u.py"), before, &after).expect("unreachable");
        assert_eq!(found.line, 4, "{found}");
        assert_eq!(
            found.what,
            "`def product_of(a, b):` comes after the end of label's body and is never defined"
        );
        // A new return above the old one leaves only a statement dead: that is no definition.
        let after = before.replace("    return 80", "    return 81\n    # old\n    return 80");
        assert!(unreachable_by_edit(Path::new("u.py"), before, &after).is_none());
        let after =
            before.replace("    return 80", "    return 81\n    # old\n    class Limit:\n        pass");
        let (_, found) = unreachable_by_edit(Path::new("u.py"), before, &after).expect("unreachable");
        assert_eq!(found.line, 8, "{found}");
        // Code after a loop's `break` inside an `if` is fine; so is a file that had dead code already.
        let fine = "for x in y:\n    if x:\n        break\n    print(x)\n";
        assert_eq!(first_unreachable(Language::Python, fine), None);
        assert!(unreachable_by_edit(Path::new("u.py"), &after, &after).is_none());
        assert!(unreachable_by_edit(Path::new("u.txt"), before, &after).is_none());
    }
}
