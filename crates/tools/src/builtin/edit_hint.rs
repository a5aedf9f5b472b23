//! What to tell the model when `old_string` is not in the file: where the text would match if
//! whitespace were ignored, or else the lines most similar to its first line.

use similar::TextDiff;

/// Lines compared when looking for similar ones (bounds the cost on huge files).
const MAX_LINES_SCANNED: usize = 20_000;

/// A hint naming the nearest candidates for `old` in `text` (line numbers are 1-based).
pub(crate) fn nearest_candidates(text: &str, old: &str) -> String {
    let file_lines: Vec<&str> = text.lines().collect();
    let old_lines: Vec<&str> = old.lines().collect();
    if let Some(start) = whitespace_insensitive_match(&file_lines, &old_lines) {
        let end = start + old_lines.len() - 1;
        let range = if end == start {
            format!("line {}", start + 1)
        } else {
            format!("lines {}-{}", start + 1, end + 1)
        };
        return format!(
            "It matches {range} if whitespace is ignored: copy the exact indentation (tabs vs spaces) \
             and line ends from read_file."
        );
    }
    let Some(first) = old_lines.iter().map(|l| l.trim()).find(|l| !l.is_empty()) else {
        return "old_string is only whitespace; include visible text.".to_string();
    };
    let mut scored: Vec<(f32, usize)> = file_lines
        .iter()
        .take(MAX_LINES_SCANNED)
        .enumerate()
        .filter_map(|(i, line)| {
            let line = line.trim();
            if line.is_empty() || line.len() > first.len() * 3 + 20 || first.len() > line.len() * 3 + 20 {
                return None;
            }
            let ratio = TextDiff::from_chars(first, line).ratio();
            (ratio >= 0.5).then_some((ratio, i))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    if scored.is_empty() {
        return "No similar line was found; read the file again and copy the exact text.".to_string();
    }
    let shown: Vec<String> = scored
        .iter()
        .take(3)
        .map(|&(ratio, i)| {
            let line: String = file_lines[i].chars().take(200).collect();
            format!("  line {} ({:.0}% similar): {line}", i + 1, ratio * 100.0)
        })
        .collect();
    format!(
        "The closest lines to its first line are:\n{}\nRead the file again and copy the exact text, including whitespace.",
        shown.join("\n")
    )
}

/// The first index where `old` matches `file` line by line with surrounding whitespace ignored.
fn whitespace_insensitive_match(file: &[&str], old: &[&str]) -> Option<usize> {
    if old.is_empty() || old.len() > file.len() || old.iter().all(|l| l.trim().is_empty()) {
        return None;
    }
    (0..=file.len() - old.len())
        .find(|&start| old.iter().zip(&file[start..]).all(|(a, b)| a.trim() == b.trim()))
}

/// Lines of a leftover name listed at most.
const MAX_LEFTOVER_LINES: usize = 5;

/// Names an edit that looks like a rename done in one place only left behind: names (identifiers,
/// `[A-Za-z_][A-Za-z0-9_]*`) that occur in `old` but not in `new` — while `new` brings a name of its
/// own — and that `after`, the file's text after the edit, still uses. Empty when there are none.
pub(crate) fn leftover_names<'a>(old: &'a str, new: &str, after: &str) -> Vec<&'a str> {
    let old_names = names(old);
    let new_names = names(new);
    let brought: Vec<&str> = new_names.iter().copied().filter(|name| !old_names.contains(name)).collect();
    old_names
        .into_iter()
        .filter(|name| !new_names.contains(name) && !NEVER_RENAMED.contains(name))
        // A rename: `new` is `old` with this name replaced by one the edit brings.
        .filter(|name| brought.iter().any(|to| replace_word(old, name, to) == new))
        .filter(|name| !lines_using(after, name).is_empty())
        .collect()
}

/// The rename an edit makes, `(from, to)`: `new` is `old` with every use of one name replaced by
/// another that `old` does not use. `None` for any other edit.
pub(crate) fn renamed<'a>(old: &'a str, new: &'a str) -> Option<(&'a str, &'a str)> {
    let old_names = names(old);
    let new_names = names(new);
    let gone: Vec<&str> = old_names.iter().copied().filter(|name| !new_names.contains(name)).collect();
    let brought: Vec<&str> = new_names.iter().copied().filter(|name| !old_names.contains(name)).collect();
    match (gone.as_slice(), brought.as_slice()) {
        ([from], [to]) if replace_word(old, from, to) == new => Some((from, to)),
        _ => None,
    }
}

/// Keywords, literals and built-in type names of common languages: changing `True` to `False` or
/// `int` to `float` on one line is not a rename, whatever else still uses them.
#[rustfmt::skip]
const NEVER_RENAMED: &[&str] = &[
    "True", "False", "None", "true", "false", "null", "nil", "undefined", "self", "Self", "this", "and",
    "or", "not", "in", "is", "if", "else", "elif", "return", "def", "class", "import", "from", "as",
    "for", "while", "with", "pass", "break", "continue", "lambda", "async", "await", "let", "const",
    "var", "fn", "pub", "mut", "int", "str", "float", "bool", "bytes", "list", "dict", "set", "tuple",
    "print", "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize", "f32", "f64",
    "String", "Vec", "Option", "Some", "Ok", "Err", "string", "number", "boolean", "void", "double",
    "char", "long",
];

/// `text` with every whole-word occurrence of `name` replaced by `to`.
fn replace_word(text: &str, name: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for span in word_spans(text).filter(|span| &text[span.clone()] == name) {
        out.push_str(&text[copied..span.start]);
        out.push_str(to);
        copied = span.end;
    }
    out.push_str(&text[copied..]);
    out
}

/// The note an edit result carries for [`leftover_names`]: each name with the line numbers
/// (1-based) and text of up to [`MAX_LEFTOVER_LINES`] lines that still use it.
pub(crate) fn leftover_note(leftovers: &[&str], after: &str) -> Option<String> {
    let notes: Vec<String> = leftovers
        .iter()
        .map(|name| {
            let lines = lines_using(after, name);
            let more = lines.len().saturating_sub(MAX_LEFTOVER_LINES);
            let more = if more > 0 { format!("\n  … and {more} more lines") } else { String::new() };
            format!("`{name}` still occurs in the file:\n{}{more}", listed_lines(&lines))
        })
        .collect();
    (!notes.is_empty())
        .then(|| format!("{}\nIf this edit renames it, change those lines too.", notes.join("\n")))
}

/// The first [`MAX_LEFTOVER_LINES`] of `lines` (from [`lines_using`]), one `  line <n>: <text>`
/// per line.
pub(crate) fn listed_lines(lines: &[(usize, String)]) -> String {
    let shown: Vec<String> =
        lines.iter().take(MAX_LEFTOVER_LINES).map(|(n, line)| format!("  line {n}: {line}")).collect();
    shown.join("\n")
}

/// The lines of `text` that use `name` as a whole word: (1-based line number, the line cut to 160
/// characters).
pub fn lines_using(text: &str, name: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| word_spans(line).any(|span| &line[span] == name))
        .map(|(i, line)| (i + 1, line.chars().take(160).collect()))
        .collect()
}

/// Non-blank lines of the file around an insertion that are compared with it: the inserted
/// count plus this many.
const NEARBY_EXTRA_LINES: usize = 3;

/// The inserted lines, when an edit only inserts (`new` is `old` plus lines after it, or lines
/// before it) and every non-blank inserted line already stands right there in `text` (among the
/// next, or previous, non-blank lines): the edit would duplicate code instead of changing it, the
/// mistake of a model that meant to change the line below `old`. `None` otherwise.
pub(crate) fn duplicated_insertion(text: &str, old: &str, new: &str) -> Option<String> {
    let (inserted, nearby, _) = insertion(text, old, new)?;
    if inserted.is_empty() {
        return None;
    }
    inserted.iter().all(|line| nearby.contains(line)).then(|| inserted.join("\n"))
}

/// What an edit that only inserts puts in, and what is already there: the non-blank inserted lines
/// (without trailing whitespace), the non-blank lines of `text` next to the insertion (after `old`
/// when `new` is `old` plus lines, else before it, nearest first; as many as the inserted lines
/// plus [`NEARBY_EXTRA_LINES`]), and whether they are after `old`. `None` when the edit does more
/// than insert.
fn insertion<'a>(text: &'a str, old: &str, new: &'a str) -> Option<(Vec<&'a str>, Vec<&'a str>, bool)> {
    let at = text.find(old)?;
    let (inserted, nearby, after): (&str, Vec<&str>, bool) = if let Some(added) = new.strip_prefix(old) {
        (added, text[at + old.len()..].lines().collect(), true)
    } else if let Some(added) = new.strip_suffix(old) {
        (added, text[..at].lines().rev().collect(), false)
    } else {
        return None;
    };
    let inserted = solid_lines(inserted);
    let nearby = nearby
        .into_iter()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .take(inserted.len() + NEARBY_EXTRA_LINES)
        .collect();
    Some((inserted, nearby, after))
}

/// How alike two lines must be (`similar`'s character ratio, 0–1) for one to be a changed copy of
/// the other.
const CHANGED_COPY_RATIO: f32 = 0.8;

/// A change written as an insertion: `new` is `old` plus lines after it, every inserted
/// non-blank line stands right below in `text` (as [`duplicated_insertion`] looks) either
/// as it is or changed a little (same indentation, [`CHANGED_COPY_RATIO`]), and at least one is
/// changed. The edit would leave the old lines in place under their new versions. The
/// (line in `text`, its new version) pairs of the changed ones; `None` otherwise.
pub(crate) fn change_written_as_insertion(text: &str, old: &str, new: &str) -> Option<Vec<(String, String)>> {
    let (inserted, nearby, after) = insertion(text, old, new)?;
    if !after {
        return None;
    }
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut changed = Vec::new();
    for line in &inserted {
        if nearby.contains(line) {
            continue;
        }
        let original = nearby
            .iter()
            .filter(|near| indent(near) == indent(line))
            .find(|near| similar::TextDiff::from_chars(**near, *line).ratio() >= CHANGED_COPY_RATIO)?;
        changed.push((original.to_string(), line.to_string()));
    }
    (!changed.is_empty()).then_some(changed)
}

/// `text` with each `(line, new version)` of `pairs` changed in place: the first whole line equal
/// to it after `old` (the change [`change_written_as_insertion`] found). `None` when `old` is not
/// in `text` or a line is not found after it.
pub(crate) fn as_change(text: &str, old: &str, pairs: &[(String, String)]) -> Option<String> {
    let at = text.find(old)? + old.len();
    let (head, tail) = text.split_at(at);
    let mut lines: Vec<String> = tail.split_inclusive('\n').map(str::to_string).collect();
    for (from, to) in pairs {
        let line = lines.iter_mut().find(|line| line.trim_end_matches(['\n', '\r']) == from)?;
        let end = &line[from.len()..];
        *line = format!("{to}{end}");
    }
    Some(format!("{head}{}", lines.concat()))
}

/// The last non-blank line of `text` (without its line end), when no other line of `text` is
/// the same: an `old_string` that adds code at the end of the file.
pub(crate) fn unique_last_line(text: &str) -> Option<&str> {
    let last = text.lines().rev().find(|line| !line.trim().is_empty())?;
    // edit_file matches substrings: the line must occur once as one.
    (text.matches(last).count() == 1).then_some(last)
}

/// Where the copy begins, when `new` ends with the very lines that follow `old` in `text` (the
/// first k non-blank ones, in order, at least one of 4 or more characters) while `old` holds none of
/// them: a model that copied the lines below the one it changed into `new_string`. The byte offset
/// in `new` of the first copied line; `None` otherwise.
pub(crate) fn copied_tail(text: &str, old: &str, new: &str) -> Option<usize> {
    let at = text.find(old)?;
    let following = solid_lines(&text[at + old.len()..]);
    let old_lines = solid_lines(old);
    // (byte offset, line) of every non-blank line of `new`.
    let mut offset = 0;
    let mut new_lines = Vec::new();
    for line in new.split_inclusive('\n') {
        if !line.trim().is_empty() {
            new_lines.push((offset, line.trim_end()));
        }
        offset += line.len();
    }
    let k = (1..new_lines.len().min(following.len() + 1)).rev().find(|&k| {
        let copied = &following[..k];
        new_lines[new_lines.len() - k..].iter().map(|(_, line)| line).eq(copied)
            && copied.iter().all(|line| !old_lines.contains(line))
            && copied.iter().any(|line| line.trim().len() >= 4)
    })?;
    Some(new_lines[new_lines.len() - k].0)
}

/// The non-blank lines of `text`, without their trailing whitespace.
fn solid_lines(text: &str) -> Vec<&str> {
    text.lines().map(str::trim_end).filter(|line| !line.trim().is_empty()).collect()
}

/// Byte ranges of the words of `text`: maximal runs of `[A-Za-z0-9_]`.
fn word_spans(text: &str) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let is_word = |c: char| c == '_' || c.is_ascii_alphanumeric();
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + text[at..].find(is_word)?;
        let end = text[start..].find(|c: char| !is_word(c)).map_or(text.len(), |len| start + len);
        at = end;
        Some(start..end)
    })
}

/// The distinct names (words not starting with a digit) in `text`, in order of first occurrence.
fn names(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    for word in word_spans(text).map(|span| &text[span]) {
        if !word.starts_with(|c: char| c.is_ascii_digit()) && !found.contains(&word) {
            found.push(word);
        }
    }
    found
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_rename_at_one_place_names_the_lines_left() {
        let after = "from settings import TIMEOUT_SECONDS\n\n\ndef wait_time():\n    return TIMEOUT * 2\n";
        let names =
            leftover_names("from settings import TIMEOUT", "from settings import TIMEOUT_SECONDS", after);
        assert_eq!(names, ["TIMEOUT"]);
        let note = leftover_note(&names, after).unwrap();
        assert!(note.contains("`TIMEOUT` still occurs"), "{note}");
        assert!(note.contains("line 5:     return TIMEOUT * 2"), "{note}");
        assert!(!note.contains("line 1"), "TIMEOUT_SECONDS is another name: {note}");
    }

    #[test]
    fn a_complete_rename_or_a_value_change_says_nothing() {
        let after = "def area(w, h):\n    result = w * h\n    return result\n";
        assert!(
            leftover_names("    x = w * h\n    return x", "    result = w * h\n    return result", after)
                .is_empty()
        );
        assert!(leftover_names("total = 0", "total = 1", "total = 1\nprint(total)\n").is_empty());
        // A deleted line brings no new name: nothing was renamed.
        assert!(leftover_names("    print(x)\n", "", "x = 1\n").is_empty());
        // Prose or a changed value is not a rename, even when a word of it occurs elsewhere.
        assert!(leftover_names("line two", "LINE 2", "line one\nLINE 2\n").is_empty());
        assert_eq!(replace_word("x = xx + x", "x", "y"), "y = xx + y");
        assert_eq!(leftover_note(&[], after), None);
    }

    #[test]
    fn an_insertion_of_lines_already_there_is_found() {
        let text = "def average(v):\n    \"\"\"Mean.\"\"\"\n    return sum(v) / (len(v) + 1)\n";
        let old = "def average(v):";
        let dup = duplicated_insertion(text, old, "def average(v):\n    return sum(v) / (len(v) + 1)");
        assert_eq!(dup.as_deref(), Some("    return sum(v) / (len(v) + 1)"));
        // Before old_string too.
        let dup = duplicated_insertion("a = 1\nb = 2\n", "b = 2", "a = 1\nb = 2");
        assert_eq!(dup.as_deref(), Some("a = 1"));
        // New code, a changed line, or an insertion of blank lines is fine.
        assert_eq!(
            duplicated_insertion(
                text,
                "    return sum(v) / (len(v) + 1)",
                "    return sum(v) / (len(v) + 1)\n\n\ndef f():\n    return 1"
            ),
            None
        );
        assert_eq!(duplicated_insertion(text, old, "def average(values):"), None);
        assert_eq!(duplicated_insertion(text, old, "def average(v):\n\n"), None);
    }

    #[test]
    fn a_copy_of_the_lines_below_at_the_end_of_new_string_is_found() {
        let text =
            "def greet(n):\n    return \"Helo\"\n\n\nif __name__ == \"__main__\":\n    print(greet(1))\n";
        let old = "def greet(n):\n    return \"Helo\"\n\n";
        let new = "def greet(n):\n    return \"Hello\"\n\nif __name__ == \"__main__\":\n    print(greet(1))";
        let cut = copied_tail(text, old, new).unwrap();
        assert_eq!(&new[..cut], "def greet(n):\n    return \"Hello\"\n\n");
        // New code, a brace, or a line old_string already holds is not a copy.
        assert_eq!(copied_tail(text, old, "def greet(n):\n    return \"Hello\"\n\n"), None);
        assert_eq!(copied_tail("fn a() {\n    x();\n}\n", "    x();", "    x();\n    y();\n}"), None);
        // The whole of new_string being a copy is left to the other checks.
        assert_eq!(copied_tail("a = 1\nbb = 22\n", "a = 1\n", "bb = 22"), None);
    }

    #[test]
    fn many_lines_are_cut_with_a_count() {
        let after = "y = 0\n".to_string() + &"x += 1\n".repeat(8);
        let note = leftover_note(&leftover_names("x = 0", "y = 0", &after), &after).unwrap();
        assert!(note.contains("line 6:") && !note.contains("line 7:"), "{note}");
        assert!(note.contains("… and 3 more lines"), "{note}");
        assert!(names("3x _a1 b").contains(&"_a1") && !names("3x").contains(&"x"));
    }

    #[test]
    fn a_change_written_as_an_insertion_pairs_the_old_lines_with_their_new_versions() {
        let text = "def sum_x(n):\n    \"\"\"Return 4*1 + ... + 4*n.\"\"\"\n    total = 0\n    for i in range(1, n):\n        total += 4 * i\n    return total\n";
        // The 1.5B model's off-by-one "fix": the corrected loop put above the old one.
        let new = "def sum_x(n):\n    total = 0\n    for i in range(1, n + 1):\n        total += 4 * i";
        let pairs = change_written_as_insertion(text, "def sum_x(n):", new).unwrap();
        assert_eq!(
            pairs,
            vec![("    for i in range(1, n):".to_string(), "    for i in range(1, n + 1):".to_string())]
        );
        // Exact copies only are no change; new code unlike the lines around it is an insertion.
        assert_eq!(
            as_change(text, "def sum_x(n):", &pairs).unwrap(),
            text.replace("range(1, n)", "range(1, n + 1)")
        );
        assert_eq!(change_written_as_insertion(text, "def sum_x(n):", "def sum_x(n):\n    total = 0"), None);
        assert_eq!(
            change_written_as_insertion(
                text,
                "    return total",
                "    return total\n\n\ndef product_of(a, b):\n    return a * b"
            ),
            None
        );
    }
}
