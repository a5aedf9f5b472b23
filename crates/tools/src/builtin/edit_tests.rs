#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::test_support::Workspace;
use pretty_assertions::assert_eq;
use serde_json::json;

async fn read(ws: &Workspace, rel: &str) -> String {
    ws.ok("read_file", json!({"path": rel})).await
}

async fn edit(ws: &Workspace, rel: &str, old: &str, new: &str) -> String {
    ws.ok("edit_file", json!({"path": rel, "old_string": old, "new_string": new})).await
}

#[tokio::test]
async fn edit_preserves_crlf_and_bom() {
    let ws = Workspace::new();
    ws.put("a.txt", b"\xEF\xBB\xBFline one\r\nline two\r\nline three\r\n");
    read(&ws, "a.txt").await;
    edit(&ws, "a.txt", "line two", "line 2").await;
    assert_eq!(ws.bytes("a.txt"), b"\xEF\xBB\xBFline one\r\nline 2\r\nline three\r\n");
}

#[tokio::test]
async fn multi_line_edit_on_crlf_leaves_no_lf_only_lines() {
    let ws = Workspace::new();
    ws.put("a.txt", b"line one\r\nline two\r\nline three\r\n");
    read(&ws, "a.txt").await;
    // The model copies lines from read_file output, which shows no \r: old and new use bare LF.
    edit(&ws, "a.txt", "line one\nline two", "first\nsecond\nthird").await;
    let bytes = ws.bytes("a.txt");
    assert_eq!(bytes, b"first\r\nsecond\r\nthird\r\nline three\r\n");
    let lf_only = bytes.windows(2).filter(|w| w[1] == b'\n' && w[0] != b'\r').count();
    assert_eq!(lf_only, 0);
}

#[tokio::test]
async fn tab_indented_file_matches_exactly() {
    let ws = Workspace::new();
    ws.put("t.go", b"func x() {\n\tif a {\n\t\treturn 1\n\t}\n}\n");
    read(&ws, "t.go").await;
    // Spaces where the file has tabs do not match, and the hint says why.
    let err = ws
        .fails(
            "edit_file",
            json!({"path": "t.go", "old_string": "        return 1", "new_string": "        return 2"}),
        )
        .await;
    assert!(err.contains("not found") && err.contains("line 3") && err.contains("whitespace"), "{err}");
    edit(&ws, "t.go", "\t\treturn 1", "\t\treturn 2").await;
    assert_eq!(ws.bytes("t.go"), b"func x() {\n\tif a {\n\t\treturn 2\n\t}\n}\n");
}

#[tokio::test]
async fn file_without_final_newline_keeps_it_that_way() {
    let ws = Workspace::new();
    ws.put("n.txt", b"alpha\nbeta");
    read(&ws, "n.txt").await;
    edit(&ws, "n.txt", "beta", "gamma").await;
    assert_eq!(ws.bytes("n.txt"), b"alpha\ngamma");
    edit(&ws, "n.txt", "alpha", "ALPHA").await;
    assert_eq!(ws.bytes("n.txt"), b"ALPHA\ngamma");
}

#[tokio::test]
async fn multibyte_characters_around_the_match_survive() {
    let ws = Workspace::new();
    ws.put("m.txt", "héllo→wörld·日本語 ✓ 🦀\n".as_bytes());
    read(&ws, "m.txt").await;
    edit(&ws, "m.txt", "wörld", "wereld").await;
    assert_eq!(ws.bytes("m.txt"), "héllo→wereld·日本語 ✓ 🦀\n".as_bytes());
    edit(&ws, "m.txt", "日本語", "にほんご").await;
    assert_eq!(ws.bytes("m.txt"), "héllo→wereld·にほんご ✓ 🦀\n".as_bytes());
}

#[tokio::test]
async fn latin1_file_is_edited_byte_exactly_outside_the_replaced_span() {
    let ws = Workspace::new();
    let original: &[u8] = b"caf\xE9 = 1\nna\xEFve = 2\n\x81\x8D\xFF end\n";
    ws.put("l.txt", original);
    let shown = read(&ws, "l.txt").await;
    assert!(shown.contains("café = 1"), "{shown}");
    assert!(shown.contains("Latin-1"), "the read says the file is not UTF-8: {shown}");
    edit(&ws, "l.txt", "naïve = 2", "naïf = 3").await;
    assert_eq!(ws.bytes("l.txt"), b"caf\xE9 = 1\nna\xEFf = 3\n\x81\x8D\xFF end\n");
}

#[tokio::test]
async fn latin1_file_refuses_characters_it_cannot_hold_and_is_left_unchanged() {
    let ws = Workspace::new();
    let original: &[u8] = b"caf\xE9 = 1\n";
    ws.put("l.txt", original);
    read(&ws, "l.txt").await;
    let err =
        ws.fails("edit_file", json!({"path": "l.txt", "old_string": "= 1", "new_string": "= 日本"})).await;
    assert!(err.contains("left unchanged") && err.contains("Latin-1"), "{err}");
    let bytes = ws.bytes("l.txt");
    assert_eq!(bytes, original);
    assert!(!bytes.windows(3).any(|w| w == [0xEF, 0xBF, 0xBD]), "no U+FFFD written");
}

#[tokio::test]
async fn utf16le_with_bom_is_edited_back_as_utf16le() {
    let ws = Workspace::new();
    let utf16 = |s: &str| {
        let mut out = vec![0xFF, 0xFE];
        s.encode_utf16().for_each(|u| out.extend_from_slice(&u.to_le_bytes()));
        out
    };
    ws.put("w.txt", utf16("key=välue\r\nother=1\r\n"));
    read(&ws, "w.txt").await;
    edit(&ws, "w.txt", "other=1", "other=2").await;
    assert_eq!(ws.bytes("w.txt"), utf16("key=välue\r\nother=2\r\n"));
}

#[tokio::test]
async fn non_unique_old_string_fails_and_names_the_line_numbers() {
    let ws = Workspace::new();
    ws.put("d.py", b"x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n");
    read(&ws, "d.py").await;
    let err =
        ws.fails("edit_file", json!({"path": "d.py", "old_string": "x = 1", "new_string": "x = 9"})).await;
    assert!(err.contains("3 times") && err.contains("lines 1, 3, 5") && err.contains("replace_all"), "{err}");
    assert_eq!(ws.bytes("d.py"), b"x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n");
    let out = ws
        .ok(
            "edit_file",
            json!({"path": "d.py", "old_string": "x = 1", "new_string": "x = 9", "replace_all": true}),
        )
        .await;
    assert!(out.contains("3 occurrences"), "{out}");
    assert_eq!(ws.bytes("d.py"), b"x = 9\ny = 2\nx = 9\nz = 3\nx = 9\n");
}

#[tokio::test]
async fn editing_a_file_changed_on_disk_since_it_was_read_fails_and_says_so() {
    let ws = Workspace::new();
    ws.put("c.txt", b"one\ntwo\n");
    read(&ws, "c.txt").await;
    ws.put("c.txt", b"one\ntwo\nthree (added by someone else)\n");
    let err = ws.fails("edit_file", json!({"path": "c.txt", "old_string": "two", "new_string": "2"})).await;
    assert!(err.contains("modified since it was read") && err.contains("read it again"), "{err}");
    assert_eq!(ws.bytes("c.txt"), b"one\ntwo\nthree (added by someone else)\n");
    read(&ws, "c.txt").await;
    edit(&ws, "c.txt", "two", "2").await;
    assert_eq!(ws.bytes("c.txt"), b"one\n2\nthree (added by someone else)\n");
}

#[tokio::test]
async fn editing_a_file_never_read_is_refused() {
    let ws = Workspace::new();
    ws.put("u.txt", b"hello\n");
    let err =
        ws.fails("edit_file", json!({"path": "u.txt", "old_string": "hello", "new_string": "bye"})).await;
    assert!(err.contains("has not been read") && err.contains("read_file"), "{err}");
    assert_eq!(ws.bytes("u.txt"), b"hello\n");
}

#[tokio::test]
async fn empty_or_identical_strings_are_refused_before_touching_the_file() {
    let ws = Workspace::new();
    ws.put("e.txt", b"hello\n");
    read(&ws, "e.txt").await;
    let err = ws.fails("edit_file", json!({"path": "e.txt", "old_string": "", "new_string": "x"})).await;
    assert!(err.contains("old_string is empty"), "{err}");
    let err =
        ws.fails("edit_file", json!({"path": "e.txt", "old_string": "hello", "new_string": "hello"})).await;
    assert!(err.contains("identical"), "{err}");
    let err =
        ws.fails("edit_file", json!({"path": "missing.txt", "old_string": "a", "new_string": "b"})).await;
    assert!(err.contains("does not exist") && err.contains("write_file"), "{err}");
    assert_eq!(ws.bytes("e.txt"), b"hello\n");
}

#[tokio::test]
async fn missing_old_string_shows_the_closest_line() {
    let ws = Workspace::new();
    ws.put("s.py", b"def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n");
    read(&ws, "s.py").await;
    let err = ws
        .fails(
            "edit_file",
            json!({"path": "s.py", "old_string": "def add(x, y):", "new_string": "def add(p, q):"}),
        )
        .await;
    assert!(err.contains("not found") && err.contains("line 1") && err.contains("def add(a, b):"), "{err}");
}

#[tokio::test]
async fn an_edited_file_counts_as_read_and_the_result_is_a_unified_diff() {
    let ws = Workspace::new();
    ws.put("f.txt", b"a\nb\nc\n");
    read(&ws, "f.txt").await;
    let out = edit(&ws, "f.txt", "b", "B").await;
    assert!(out.contains("--- a/f.txt") && out.contains("+++ b/f.txt"), "{out}");
    assert!(out.contains("\n-b\n+B\n"), "{out}");
    // No re-read needed for a second edit: the tracker holds the new state.
    edit(&ws, "f.txt", "c", "C").await;
    assert_eq!(ws.bytes("f.txt"), b"a\nB\nC\n");
}

#[tokio::test]
async fn binary_files_are_not_edited() {
    let ws = Workspace::new();
    ws.put("b.bin", b"abc\0def");
    // Unread, it is refused as unread; seen by the session (as if read), it is refused as binary:
    // the binary check itself must hold, not only the read-before-edit one. The bytes stay.
    let edit = json!({"path": "b.bin", "old_string": "abc", "new_string": "xyz"});
    let unread = ws.fails("edit_file", edit.clone()).await;
    assert!(unread.contains("has not been read"), "{unread}");
    ws.ctx.files.record(&ws.path("b.bin"), b"abc\0def", None);
    let err = ws.fails("edit_file", edit).await;
    assert!(err.contains("looks like a binary file"), "{err}");
    assert_eq!(ws.bytes("b.bin"), b"abc\0def");
}

#[tokio::test]
async fn an_edit_that_would_duplicate_the_next_lines_is_refused_and_changes_nothing() {
    let ws = Workspace::new();
    let original = "def add(a, b):\n    \"\"\"Return a plus b.\"\"\"\n    return a + b\n";
    ws.put("m.py", original);
    ws.ok("read_file", json!({"path": "m.py"})).await;
    let err = ws
        .fails(
            "edit_file",
            json!({"path": "m.py", "old_string": "def add(a, b):", "new_string": "def add(a, b):\n    return a + b"}),
        )
        .await;
    assert!(err.contains("would duplicate them:\n    return a + b"), "{err}");
    assert!(err.contains("old_string is its last line, \"    return a + b\", and new_string"), "{err}");
    assert_eq!(ws.bytes("m.py"), original.as_bytes());
    // Adding a new function after the last line is what the message points to, and works.
    ws.ok(
        "edit_file",
        json!({"path": "m.py", "old_string": "    return a + b", "new_string": "    return a + b\n\n\ndef mul(a, b):\n    return a * b"}),
    )
    .await;
    assert!(String::from_utf8(ws.bytes("m.py")).unwrap().ends_with("def mul(a, b):\n    return a * b\n"));
}

#[tokio::test]
async fn a_fix_that_also_copies_the_lines_below_keeps_them_once() {
    let ws = Workspace::new();
    ws.put(
        "greet.py",
        "def greet(name):\n    return \"Helo\"\n\n\nif __name__ == \"__main__\":\n    print(greet(1))\n",
    );
    ws.ok("read_file", json!({"path": "greet.py"})).await;
    let out = ws
        .ok(
            "edit_file",
            json!({"path": "greet.py", "old_string": "def greet(name):\n    return \"Helo\"\n\n",
                   "new_string": "def greet(name):\n    return \"Hello\"\n\nif __name__ == \"__main__\":\n    print(greet(1))"}),
        )
        .await;
    assert!(out.contains("they were kept once, not duplicated"), "{out}");
    assert_eq!(
        String::from_utf8(ws.bytes("greet.py")).unwrap(),
        "def greet(name):\n    return \"Hello\"\n\n\nif __name__ == \"__main__\":\n    print(greet(1))\n"
    );
}

/// The 1.5B local model's off-by-one "fix": the new body glued onto the docstring's line.
const SERIES: &str = "def sum_to(n):\n    \"\"\"Return 1 + 2 + ... + n.\"\"\"\n    total = 0\n    for i in range(1, n):\n        total += i\n    return total\n";
const GLUED_OLD: &str = "def sum_to(n):\n    \"\"\"Return 1 + 2 + ... + n.\"\"\"";
const GLUED_NEW: &str = "def sum_to(n):\n    \"\"\"Return 1 + 2 + ... + n.\"\"\"total = 0\nfor i in range(1, n + 1):\n    total += i\nreturn total";

#[tokio::test]
async fn an_edit_that_breaks_python_syntax_is_made_with_a_warning_by_default() {
    let ws = Workspace::new();
    ws.put("series.py", SERIES);
    read(&ws, "series.py").await;
    let out = edit(&ws, "series.py", GLUED_OLD, GLUED_NEW).await;
    assert!(out.contains("Warning: series.py no longer parses as Python (line 2, column"), "{out}");
    assert!(out.contains("it did before this edit"), "{out}");
    assert_eq!(String::from_utf8(ws.bytes("series.py")).unwrap(), SERIES.replacen(GLUED_OLD, GLUED_NEW, 1));
    // A file that did not parse before gets no warning: the edit may be a step of its repair.
    let out = edit(&ws, "series.py", "for i in range(1, n + 1):", "for i in range(1, n + 2):").await;
    assert!(!out.contains("Warning"), "{out}");
}

#[tokio::test]
async fn the_refusing_edit_file_leaves_a_file_that_would_break_unchanged() {
    let ws = Workspace::new().with_tool(std::sync::Arc::new(super::EditFile::strict()));
    ws.put("series.py", SERIES);
    read(&ws, "series.py").await;
    let err = ws
        .fails("edit_file", json!({"path": "series.py", "old_string": GLUED_OLD, "new_string": GLUED_NEW}))
        .await;
    assert!(
        err.contains("series.py was left unchanged: after this edit it would not parse as Python (line 2"),
        "{err}"
    );
    assert_eq!(ws.bytes("series.py"), SERIES.as_bytes());
    // The right fix goes through; so does any edit of a file in a language Lathe does not check.
    edit(&ws, "series.py", "    for i in range(1, n):", "    for i in range(1, n + 1):").await;
    assert!(String::from_utf8(ws.bytes("series.py")).unwrap().contains("range(1, n + 1)"));
    ws.put("notes.txt", "a (\n");
    read(&ws, "notes.txt").await;
    edit(&ws, "notes.txt", "a (", "a ((").await;
}

#[tokio::test]
async fn the_strict_edit_file_refuses_to_undo_an_unfinished_rename_and_points_to_what_is_left() {
    let app = "from settings import TIMEOUT\n\n\ndef wait_time():\n    return TIMEOUT * 2\n";
    let rename = json!({"path": "app.py", "old_string": "from settings import TIMEOUT", "new_string": "from settings import TIMEOUT_SECONDS"});
    let undo = json!({"path": "app.py", "old_string": "from settings import TIMEOUT_SECONDS", "new_string": "from settings import TIMEOUT"});
    let strict = Workspace::new().with_tool(std::sync::Arc::new(super::EditFile::strict()));
    strict.put("app.py", app);
    read(&strict, "app.py").await;
    strict.ok("edit_file", rename.clone()).await;
    let renamed = strict.bytes("app.py");
    let err = strict.fails("edit_file", undo.clone()).await;
    assert!(err.contains("would undo your rename of `TIMEOUT` to `TIMEOUT_SECONDS`"), "{err}");
    assert!(err.contains("  line 5:     return TIMEOUT * 2"), "{err}");
    assert_eq!(strict.bytes("app.py"), renamed);
    // Finishing the rename is what goes through.
    edit(&strict, "app.py", "    return TIMEOUT * 2", "    return TIMEOUT_SECONDS * 2").await;
    // The default edit_file lets a model change its mind.
    let ws = Workspace::new();
    ws.put("app.py", app);
    read(&ws, "app.py").await;
    ws.ok("edit_file", rename).await;
    ws.ok("edit_file", undo).await;
    assert_eq!(ws.bytes("app.py"), app.as_bytes());
}

#[tokio::test]
async fn a_one_word_change_of_a_literal_is_no_rename_and_a_finished_rename_may_be_undone() {
    let ws = Workspace::new().with_tool(std::sync::Arc::new(super::EditFile::strict()));
    ws.put("config.py", "DEBUG = True\nVERBOSE = False\nCACHE = True\n");
    read(&ws, "config.py").await;
    let out = edit(&ws, "config.py", "DEBUG = True", "DEBUG = False").await;
    assert!(!out.contains("still occurs"), "{out}");
    edit(&ws, "config.py", "VERBOSE = False", "VERBOSE = True").await;
    ws.put("app.py", "from settings import TIMEOUT\n\n\ndef wait_time():\n    return TIMEOUT * 2\n");
    read(&ws, "app.py").await;
    edit(&ws, "app.py", "from settings import TIMEOUT", "from settings import TIMEOUT_SECONDS").await;
    edit(&ws, "app.py", "    return TIMEOUT * 2", "    return TIMEOUT_SECONDS * 2").await;
    // Nothing uses TIMEOUT any more: undoing the first edit is the model's choice to make.
    edit(&ws, "app.py", "from settings import TIMEOUT_SECONDS", "from settings import TIMEOUT").await;
}

#[tokio::test]
async fn the_end_of_file_hint_is_only_given_when_the_last_line_occurs_once_as_text() {
    let ws = Workspace::new();
    let original = "def add(a, b):\n    \"\"\"Return a plus b.\"\"\"\n    if a:\n        return a + b\n    return a + b\n";
    ws.put("m.py", original);
    read(&ws, "m.py").await;
    let err = ws
        .fails(
            "edit_file",
            json!({"path": "m.py", "old_string": "        return a + b", "new_string": "    if a:\n        return a + b"}),
        )
        .await;
    assert!(err.contains("would duplicate them"), "{err}");
    assert!(!err.contains("its last line"), "`    return a + b` is also part of line 4: {err}");
    // A new_string that only adds a copy of the next line changes nothing once the copy is kept
    // once: refused, not turned into an added blank line.
    let err = ws
        .fails(
            "edit_file",
            json!({"path": "m.py", "old_string": "    if a:", "new_string": "    if a:\n        return a + b"}),
        )
        .await;
    assert!(err.contains("without the copy of the lines that follow it, new_string is old_string"), "{err}");
    assert_eq!(ws.bytes("m.py"), original.as_bytes());
}

#[tokio::test]
async fn a_function_added_inside_the_one_above_it_is_made_its_sibling_by_the_strict_edit_file_and_warned_of_otherwise()
 {
    let utils = "def label(code):\n    return str(code)\n\n\ndef limit():\n    return 80\n";
    let nested = json!({"path": "u.py", "old_string": "    return str(code)", "new_string": "    return str(code)\n\n    def product_of(a, b):\n        return a * b"});
    let strict = Workspace::new().with_tool(std::sync::Arc::new(super::EditFile::strict()));
    strict.put("u.py", utils);
    read(&strict, "u.py").await;
    let out = strict.ok("edit_file", nested.clone()).await;
    assert!(out.contains("it was dedented to sit beside that one instead"), "{out}");
    let fixed = "def label(code):\n    return str(code)\n\ndef product_of(a, b):\n    return a * b\n\n\ndef limit():\n    return 80\n";
    assert_eq!(strict.bytes("u.py"), fixed.as_bytes());
    // Without a body it cannot be made right: refused, saying what is missing.
    let bodiless = json!({"path": "u.py", "old_string": "    return 80", "new_string": "    return 80\n\n\n    def last_item(items):"});
    let err = strict.fails("edit_file", bodiless).await;
    assert!(
        err.contains("u.py was left unchanged") && err.contains("must also hold the new definition's body"),
        "{err}"
    );
    assert_eq!(strict.bytes("u.py"), fixed.as_bytes());
    // The default edit_file makes the edit as written, and warns.
    let ws = Workspace::new();
    ws.put("u.py", utils);
    read(&ws, "u.py").await;
    let out = ws.ok("edit_file", nested).await;
    assert!(
        out.contains("Warning: u.py line 4: `def product_of(a, b):` comes after the end of label's body"),
        "{out}"
    );
}

#[tokio::test]
async fn a_change_written_as_an_insertion_is_made_in_place_by_the_strict_edit_file() {
    let series =
        "def sum_x(n):\n    total = 0\n    for i in range(1, n):\n        total += 4 * i\n    return total\n";
    let above = json!({"path": "s.py", "old_string": "def sum_x(n):", "new_string": "def sum_x(n):\n    total = 0\n    for i in range(1, n + 1):\n        total += 4 * i"});
    let strict = Workspace::new().with_tool(std::sync::Arc::new(super::EditFile::strict()));
    strict.put("s.py", series);
    read(&strict, "s.py").await;
    let out = strict.ok("edit_file", above.clone()).await;
    assert!(
        out.contains("those lines were changed instead of copied: `for i in range(1, n):` → `for i in range(1, n + 1):`"),
        "{out}"
    );
    assert_eq!(strict.bytes("s.py"), series.replace("range(1, n)", "range(1, n + 1)").as_bytes());
    // The default edit_file makes the edit asked for.
    let ws = Workspace::new();
    ws.put("s.py", series);
    read(&ws, "s.py").await;
    ws.ok("edit_file", above).await;
    assert!(
        String::from_utf8(ws.bytes("s.py"))
            .unwrap()
            .contains("range(1, n + 1):\n        total += 4 * i\n    total = 0")
    );
}
