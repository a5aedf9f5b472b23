use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall { id: "c".into(), name: name.into(), arguments, incomplete: None }
}

fn text(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

#[test]
fn call_line_fits_the_width() {
    let long = call("shell", json!({"command": "x".repeat(200)}));
    let summary = "x".repeat(200);
    let line = call_line(&long, &summary, CallState::Running { frame: 3 }, Duration::from_millis(12_400), 40);
    assert!(line.width() <= 40, "{}", text(&line));
    assert!(text(&line).ends_with("· 12s"), "{}", text(&line));
}

#[test]
fn elapsed_times_read_naturally() {
    let cases = [(35, "35ms"), (1_450, "1.4s"), (12_000, "12s"), (125_000, "2m05s")];
    for (ms, expected) in cases {
        assert_eq!(format_elapsed(Duration::from_millis(ms)), expected);
    }
}

#[test]
fn todo_rows_mark_each_status() {
    let rows = todo_rows(
        &json!([{"content": "a", "status": "completed"}, {"content": "b", "status": "in_progress"}, {"content": "c", "status": "pending"}]),
        30,
    );
    let texts: Vec<String> = rows.iter().map(text).collect();
    assert_eq!(texts, vec!["• Tasks", "  ☒ a", "  ◐ b", "  ☐ c"]);
}
