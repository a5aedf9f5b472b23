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
    let rows = render(DIFF, 40, &[], 20);
    assert_eq!(
        texts(&rows),
        vec!["  10   ctx", "  11 - old", "  11 + new", "   ⋮", "  40   keep", "  41 + added"]
    );
    assert_eq!(rows[1].spans.last().map(|s| s.style), Some(theme::diff_removed()));
    assert_eq!(rows[2].spans.last().map(|s| s.style), Some(theme::diff_added()));
}

#[test]
fn a_long_diff_is_capped_with_a_count() {
    let rows = render(DIFF, 40, &[], 3);
    assert_eq!(texts(&rows), vec!["  10   ctx", "  11 - old", "… +4 lines"]);
}
