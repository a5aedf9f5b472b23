//! `lathe batch`: a task file run by the local pool, end to end against scripted mocks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::batch_fixtures::{self, DEFAULT_FLAGS, Fixture, Kind};

/// A home (no retries) beside the fixture's repositories.
struct Home {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    out: PathBuf,
}

fn home() -> Home {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical");
    let home = root.join("lathe-home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    Home { _tmp: tmp, out: root.join("out"), root, home }
}

/// `lathe batch TASKS --out OUT ARGS --provider anthropic --model claude-sonnet-4-5`.
fn batch(home: &Home, tasks: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .arg("batch")
        .arg(tasks)
        .arg("--out")
        .arg(&home.out)
        .args(args)
        .args(DEFAULT_FLAGS)
        .current_dir(&home.root)
        .env("LATHE_HOME", &home.home)
        .env("HOME", &home.root)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .env_remove("LATHE_MODEL")
        .stdin(Stdio::null());
    command
}

async fn output(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The rows of OUT/results.jsonl (every line must be a complete JSON object).
fn rows(home: &Home) -> Vec<Value> {
    let text = std::fs::read_to_string(home.out.join("results.jsonl")).unwrap_or_default();
    assert!(text.is_empty() || text.ends_with('\n'), "a cut line in results.jsonl: {text:?}");
    text.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))).collect()
}

fn ids_with(rows: &[Value], status: &str) -> BTreeSet<String> {
    rows.iter().filter(|r| r["status"] == status).map(|r| r["id"].as_str().unwrap().to_string()).collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
}

#[tokio::test]
async fn the_fixture_repositories_fail_their_check_until_the_known_fix() {
    let fixture = batch_fixtures::twenty_tasks().await;
    assert_eq!(fixture.ids(Kind::Solvable).len(), 15);
    assert_eq!(fixture.ids(Kind::Unsolvable).len(), 3);
    assert_eq!(fixture.ids(Kind::Hanging).len(), 2);
    let task = &fixture.tasks[0];
    let fix = "diff --git a/answer.txt b/answer.txt\nnew file mode 100644\n--- /dev/null\n+++ b/answer.txt\n@@ -0,0 +1 @@\n+42\n";
    let wrong = fix.replace("+42", "+43");
    assert!(batch_fixtures::patch_passes(&task.repo, &task.base_sha, fix));
    assert!(!batch_fixtures::patch_passes(&task.repo, &task.base_sha, &wrong));
    assert!(!batch_fixtures::patch_passes(&task.repo, &task.base_sha, ""));
}

/// Every resolved row's patch (from preds.json) passes the check in a fresh clone; no other does.
fn confirm_by_preds(fixture: &Fixture, home: &Home, rows: &[Value]) {
    let preds = read_json(&home.out.join("preds.json"));
    let preds = preds.as_array().expect("preds array");
    let pred_ids: BTreeSet<String> =
        preds.iter().map(|p| p["instance_id"].as_str().unwrap().to_string()).collect();
    assert_eq!(pred_ids, fixture.all_ids());
    for pred in preds {
        let id = pred["instance_id"].as_str().unwrap();
        assert_eq!(pred["model_name_or_path"], "claude-sonnet-4-5");
        let task = fixture.tasks.iter().find(|t| t.id == id).unwrap();
        let row = rows.iter().find(|r| r["id"] == id).unwrap();
        let patch = pred["model_patch"].as_str().unwrap();
        let passes = batch_fixtures::patch_passes(&task.repo, &task.base_sha, patch);
        assert_eq!(passes, row["status"] == "resolved", "{id}: {row}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_pool_resolves_exactly_the_solvable_tasks_and_times_out_the_hangs() {
    let fixture = batch_fixtures::twenty_tasks().await;
    let home = home();
    let out = output(batch(&home, &fixture.tasks_file, &["--executor", "local", "--workers", "2"])).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let rows = rows(&home);
    assert_eq!(rows.len(), 20, "{rows:?}");
    assert_eq!(ids_with(&rows, "resolved"), fixture.ids(Kind::Solvable), "{rows:#?}");
    assert_eq!(ids_with(&rows, "unresolved"), fixture.ids(Kind::Unsolvable));
    assert_eq!(ids_with(&rows, "timeout"), fixture.ids(Kind::Hanging));
    confirm_by_preds(&fixture, &home, &rows);
    let served = fixture.served_usage();
    let sum = |field: &str| rows.iter().map(|r| r[field].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("input_tokens"), served.input);
    assert_eq!(sum("cached_tokens"), served.cached);
    assert_eq!(sum("output_tokens"), served.output);
    let cost: f64 = rows.iter().map(|r| r["cost_usd"].as_f64().unwrap()).sum();
    assert!((cost - served.cost_usd).abs() < 1e-9, "{cost} vs {}", served.cost_usd);
    for row in &rows {
        let dir = home.out.join("tasks").join(row["id"].as_str().unwrap());
        assert!(dir.join("patch.diff").is_file(), "{row}");
        assert!(dir.join("session.jsonl").is_file(), "{row}");
        assert_eq!(
            row["patch_bytes"].as_u64().unwrap(),
            std::fs::metadata(dir.join("patch.diff")).unwrap().len()
        );
    }
    let summary = read_json(&home.out.join("summary.json"));
    assert_eq!(summary["tasks"], 20);
    assert_eq!(summary["by_status"]["resolved"], 15);
    assert_eq!(summary["by_status"]["timeout"], 2);
    assert_eq!(summary["resolved_rate"], 0.75);
    assert!((summary["cost_usd"].as_f64().unwrap() - served.cost_usd).abs() < 1e-9);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("resolved rate 75.0%"), "{stdout}");
    assert!(stdout.contains("t19 timeout"), "{stdout}");
}
