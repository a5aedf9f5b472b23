use super::*;
use pretty_assertions::assert_eq;

fn texts(rows: &[Line<'_>]) -> Vec<String> {
    rows.iter()
        .map(|row| row.spans.iter().map(|s| s.content.as_ref()).collect::<String>().trim_end().to_string())
        .collect()
}

const DIFF: &str =
    "--- a/f\n+++ b/f\n@@ -10,3 +10,3 @@\n ctx\n-old\n+new\n@@ -40,1 +40,2 @@\n keep\n+added\n";

#[test]
fn rows_carry_line_numbers_signs_and_hunk_separators() {
    let rows = render(DIFF, 40, &[], Gutter::Numbers, 20);
    assert_eq!(
        texts(&rows),
        vec!["  10   ctx", "  11 - old", "  11 + new", "   ⋮", "  40   keep", "  41 + added"]
    );
    assert_eq!(rows[1].spans.last().map(|s| s.style), Some(theme::diff_removed()));
    assert_eq!(rows[2].spans.last().map(|s| s.style), Some(theme::diff_added()));
}

#[test]
fn signs_only_and_cap() {
    let rows = render(DIFF, 40, &[], Gutter::Signs, 3);
    assert_eq!(texts(&rows), vec!["  ctx", "- old", "… +4 lines"]);
}

#[test]
fn the_diff_is_found_after_the_summary_line() {
    assert_eq!(find_diff(&format!("Edited f: replaced 1 occurrence.\n{DIFF}")), Some(DIFF));
    assert_eq!(find_diff("Wrote f: content unchanged."), None);
}

#[test]
fn a_new_file_is_all_additions() {
    let rows = render(&creation_diff("a\nb\n"), 40, &[], Gutter::Numbers, 10);
    assert_eq!(texts(&rows), vec!["   1 + a", "   2 + b"]);
}
