#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use serde_json::json;

use super::*;

#[test]
fn a_second_row_for_an_id_is_refused_and_the_file_keeps_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut results = Results::open(dir.path(), &BTreeSet::new()).unwrap();
    results.append(json!({"id": "a", "status": "resolved"})).unwrap();
    let again = results.append(json!({"id": "a", "status": "error"}));
    assert!(matches!(again, Err(ResultsError::Duplicate(ref id)) if id == "a"), "{again:?}");
    assert!(matches!(results.append(json!({"status": "error"})), Err(ResultsError::NoId(_))));
    let text = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    assert_eq!(text, "{\"id\":\"a\",\"status\":\"resolved\"}\n");
    // Reopened, the row is there and still refuses a second one.
    let mut reopened = Results::open(dir.path(), &BTreeSet::new()).unwrap();
    assert!(reopened.finished().contains("a"));
    assert!(matches!(reopened.append(json!({"id": "a"})), Err(ResultsError::Duplicate(_))));
}

#[test]
fn a_line_cut_short_is_dropped_and_redo_removes_the_rows_it_reruns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.jsonl");
    std::fs::write(
        &path,
        "{\"id\":\"a\",\"status\":\"resolved\"}\n{\"id\":\"b\",\"status\":\"resolved\"}\n{\"id\":\"c\",\"sta",
    )
    .unwrap();
    let results = Results::open(dir.path(), &BTreeSet::new()).unwrap();
    assert_eq!(results.finished().iter().map(String::as_str).collect::<Vec<_>>(), ["a", "b"]);
    assert!(std::fs::read_to_string(&path).unwrap().ends_with("\"resolved\"}\n"));
    drop(results);
    let redo: BTreeSet<String> = ["a".to_string()].into();
    let results = Results::open(dir.path(), &redo).unwrap();
    assert_eq!(results.rows().len(), 1);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"id\":\"b\",\"status\":\"resolved\"}\n");
}

#[test]
fn the_summary_counts_every_status_and_takes_nearest_rank_percentiles() {
    let rows: Vec<Value> = (1..=10)
        .map(|n| {
            let status = if n <= 4 { "resolved" } else { "timeout" };
            json!({"id": format!("t{n}"), "status": status, "cost_usd": 0.5, "wall_s": n as f64,
                   "input_tokens": 10, "cached_tokens": 1, "output_tokens": 2})
        })
        .collect();
    let summary = summary(&rows, 10, 1800.0);
    assert_eq!(summary["by_status"]["resolved"], 4);
    assert_eq!(summary["by_status"]["timeout"], 6);
    assert_eq!(summary["by_status"]["limits"], 0);
    assert_eq!(summary["resolved_rate"], 0.4);
    assert_eq!(summary["cost_usd"], 5.0);
    assert_eq!(summary["cost_per_resolved_usd"], 1.25);
    assert_eq!(summary["wall_s_p50"], 5.0);
    assert_eq!(summary["wall_s_p90"], 9.0);
    assert_eq!(summary["tasks_per_hour"], 20.0);
    assert_eq!(summary["input_tokens"], 100);
    assert!(table(&summary).contains("resolved rate 40.0%"));
}
