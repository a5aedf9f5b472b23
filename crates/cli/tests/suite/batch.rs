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
    batch_to(home, tasks, home.out.as_os_str(), args)
}

/// As [`batch`], with `--out OUT` as given (relative to `home.root`, the command's directory).
fn batch_to(home: &Home, tasks: &Path, out: &std::ffi::OsStr, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .arg("batch")
        .arg(tasks)
        .arg("--out")
        .arg(out)
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
    // The hanging agents' commands were killed with them.
    let out_dir = home.out.display().to_string();
    until(10, "every agent and command to end", || processes_mentioning(&out_dir).is_empty()).await;
    assert!(stdout.contains("t19 timeout"), "{stdout}");
}

/// Solvable tasks `s01…` whose mocks can serve the fix `times` times over.
async fn solvable(count: usize, times: usize) -> Fixture {
    let specs = (0..count)
        .map(|n| {
            let turns = batch_fixtures::turns_for(Kind::Solvable, n as u64);
            (format!("s{:02}", n + 1), Kind::Solvable, (0..times).flat_map(|_| turns.clone()).collect())
        })
        .collect();
    batch_fixtures::custom(specs).await
}

/// Polls `done` every 20 ms until it holds; panics after `seconds`.
async fn until(seconds: u64, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Pids of live processes whose command line or environment mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == std::process::id() || super::support::process_gone(&pid.to_string()) {
            continue;
        }
        let read = |file: &str| std::fs::read(format!("/proc/{pid}/{file}")).unwrap_or_default();
        if [read("cmdline"), read("environ")].iter().any(|bytes| text(bytes).contains(needle)) {
            pids.push(pid);
        }
    }
    pids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_killed_mid_run_resumes_with_only_the_missing_ids_and_no_duplicate_rows() {
    let mut specs: Vec<(String, Kind)> = (1..=4).map(|n| (format!("t{n:02}"), Kind::Solvable)).collect();
    specs.extend([("t05".to_string(), Kind::Hanging), ("t06".to_string(), Kind::Hanging)]);
    let mut fixture = batch_fixtures::tasks(specs).await;
    for task in fixture.tasks.iter_mut().filter(|t| t.kind == Kind::Hanging) {
        task.line["timeout_s"] = serde_json::json!(60);
    }
    let tasks = fixture.subset("resume.jsonl", &["t01", "t02", "t03", "t04", "t05", "t06"]);
    let home = home();
    let tmp = home.root.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut first = batch(&home, &tasks, &["--workers", "2"]);
    let mut first = first.env("TMPDIR", &tmp).stdout(Stdio::null()).spawn().expect("spawn");
    // Killed while the two hanging tasks run, after the four others have their rows.
    until(60, "4 rows and both hangs running", || {
        rows(&home).len() == 4 && fixture.tasks[4..].iter().all(|t| t.server.requests().len() == 1)
    })
    .await;
    // …and their `sleep` runs (killed while it is being started, bubblewrap could miss its
    // parent's death: it sets its death signal only after the fork).
    let out_dir = home.out.display().to_string();
    let sleeping = || {
        let comm = |pid: &u32| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        processes_mentioning(&out_dir).iter().filter(|pid| comm(pid).trim() == "sleep").count()
    };
    until(30, "both hanging commands to run", || sleeping() == 2).await;
    first.kill().expect("kill");
    first.wait().expect("wait");
    let left = || {
        let show = |pid: &u32| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            format!("{stat} {}", text(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()))
        };
        processes_mentioning(&out_dir).iter().map(show).collect::<Vec<_>>()
    };
    let waited =
        tokio::time::timeout(std::time::Duration::from_secs(20), until(30, "", || left().is_empty()));
    assert!(waited.await.is_ok(), "still running after the kill: {:#?}", left());
    let before: Vec<usize> = fixture.tasks.iter().map(|t| t.server.requests().len()).collect();

    let scratch = tmp.join("lathe-batch");
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 2, "the killed tasks' clones");
    let mut rerun = batch(&home, &tasks, &["--workers", "2"]);
    rerun.env("TMPDIR", &tmp);
    let rerun = output(rerun).await;
    assert_eq!(rerun.status.code(), Some(0), "{}", text(&rerun.stderr));
    assert!(text(&rerun.stdout).contains("6 tasks, 4 finished already, 2 to run"), "{}", text(&rerun.stdout));
    let rows = rows(&home);
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!((ids.len(), unique.len()), (6, 6), "{ids:?}");
    assert_eq!(ids_with(&rows, "resolved").len(), 4);
    for (task, before) in fixture.tasks.iter().zip(before).take(4) {
        assert_eq!(task.server.requests().len(), before, "{} ran again", task.id);
    }
    for task in &fixture.tasks[4..] {
        assert_eq!(task.server.requests().len(), 2, "{} did not run again", task.id);
    }
    let left: Vec<_> = std::fs::read_dir(&scratch).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "scratch clones left behind: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_skips_finished_tasks_and_redo_runs_them_again_in_place() {
    let fixture = solvable(2, 2).await;
    let home = home();
    let first = output(batch(&home, &fixture.tasks_file, &["--workers", "2"])).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert_eq!(ids_with(&rows(&home), "resolved"), fixture.all_ids());
    assert_eq!(fixture.requests(), 4);

    let again = output(batch(&home, &fixture.tasks_file, &["--workers", "2"])).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert!(text(&again.stdout).contains("2 finished already, 0 to run"), "{}", text(&again.stdout));
    assert_eq!(fixture.requests(), 4, "a finished task ran again");

    let redo = output(batch(&home, &fixture.tasks_file, &["--workers", "2", "--redo"])).await;
    assert_eq!(redo.status.code(), Some(0), "{}", text(&redo.stderr));
    assert!(text(&redo.stdout).contains("0 finished already, 2 to run"), "{}", text(&redo.stdout));
    assert_eq!(fixture.requests(), 8);
    let rows = rows(&home);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(ids_with(&rows, "resolved"), fixture.all_ids());
    assert_eq!(read_json(&home.out.join("summary.json"))["tasks"], 2);
}

/// Every file under `dir` (recursively) whose text contains `needle`, leaving out `skip`.
fn files_containing(dir: &Path, needle: &str, skip: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.starts_with(skip) {
            continue;
        }
        if path.is_dir() {
            found.extend(files_containing(&path, needle, skip));
        } else if text(&std::fs::read(&path).unwrap_or_default()).contains(needle) {
            found.push(path);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_cannot_see_another_tasks_workspace_or_the_results_and_cannot_write_memory() {
    let home = home();
    // TMPDIR through a symbolic link: hiding must compare resolved paths.
    let tmp = home.root.join("tmp");
    std::fs::create_dir_all(home.root.join("tmp-real")).unwrap();
    std::os::unix::fs::symlink(home.root.join("tmp-real"), &tmp).unwrap();
    let sibling = tmp.join("lathe-batch/other.1.1/ws");
    std::fs::create_dir_all(&sibling).unwrap();
    std::fs::write(sibling.join("planted.txt"), "SECRET-SIBLING\n").unwrap();
    let earlier = home.out.join("tasks/zz");
    std::fs::create_dir_all(&earlier).unwrap();
    std::fs::write(earlier.join("patch.diff"), "SECRET-OUT\n").unwrap();
    let planted = sibling.join("planted.txt").display().to_string();
    std::fs::write(home.home.join("planted-home.txt"), "SECRET-HOME\n").unwrap();
    let command = format!(
        "cat README.md; ls -a {root}; cat {planted}; cat {out}; cat {lathe_home}/planted-home.txt; \
         ls {lathe_home}/sessions; echo END-OF-CHECK",
        root = tmp.join("lathe-batch").display(),
        out = earlier.join("patch.diff").display(),
        lathe_home = home.home.display(),
    );
    let call = |name: &str, arguments: Value| serde_json::json!({"tool_calls": [{"id": format!("call_{name}"), "name": name, "arguments": arguments}]});
    let turns = vec![
        call("shell", serde_json::json!({"command": command})),
        call("read_file", serde_json::json!({"path": planted})),
        call(
            "memory",
            serde_json::json!({"command": "create", "path": "/memories/note.md", "file_text": "REMEMBER-ME"}),
        ),
        serde_json::json!({"text": "Looked around."}),
    ];
    let fixture = batch_fixtures::custom(vec![("tA".into(), Kind::Solvable, turns)]).await;
    let mut command = batch(&home, &fixture.tasks_file, &["--workers", "1"]);
    command.env("TMPDIR", &tmp);
    let out = output(command).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let requests = fixture.tasks[0].server.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    // What the tools answered, as the model saw it in the last request.
    let seen = super::support::tool_result_text(&requests[3].body);
    assert!(seen.contains("# tA") && seen.contains("END-OF-CHECK"), "the shell did not run: {seen}");
    assert!(!seen.contains("SECRET-SIBLING"), "another workspace was readable: {seen}");
    assert!(!seen.contains("SECRET-OUT"), "the results folder was readable: {seen}");
    assert!(!seen.contains("SECRET-HOME"), "Lathe's home was readable: {seen}");
    assert!(!seen.contains(".jsonl"), "the sessions of Lathe's home were listed: {seen}");
    assert!(
        seen.contains("tA.") && !seen.contains("\\nother.1.1\\n"),
        "another workspace was listed: {seen}"
    );
    assert!(seen.contains("which this session may not see"), "read_file was not refused: {seen}");
    let written = files_containing(&home.home, "REMEMBER-ME", &home.home.join("sessions"));
    assert!(written.is_empty(), "memory was written: {written:?}");
    assert_eq!(rows(&home)[0]["status"], "empty_patch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_with_its_line_and_field_before_anything_runs() {
    let fixture = solvable(1, 1).await;
    let good = fixture.tasks[0].line.clone();
    let with = |field: &str, value: Value| {
        let mut line = good.clone();
        line["id"] = serde_json::json!("second");
        line[field] = value;
        line.to_string()
    };
    let mut no_prompt = good.clone();
    no_prompt.as_object_mut().unwrap().remove("prompt");
    no_prompt["id"] = serde_json::json!("second");
    let cases: Vec<(String, Vec<&str>)> = vec![
        ("{\"id\": \"second\", \"repo\": ".to_string(), vec![":2:", "not a JSON object"]),
        (no_prompt.to_string(), vec![":2:", "field `prompt` is missing"]),
        (with("timeout_s", serde_json::json!("ten")), vec![":2:", "field `timeout_s`"]),
        (with("timeout_s", serde_json::json!(1e20)), vec![":2:", "field `timeout_s`", "at most"]),
        (with("colour", serde_json::json!("red")), vec![":2:", "unknown field `colour`"]),
        (with("id", serde_json::json!("../up")), vec![":2:", "field `id`"]),
        (good.to_string(), vec![":2:", "field `id`", "already"]),
        (with("permission_mode", serde_json::json!("default")), vec![":2:", "field `permission_mode`"]),
        (
            with("provider", serde_json::json!("nosuch")),
            vec![":2:", "field `provider`", "unknown provider `nosuch`"],
        ),
        (with("repo", serde_json::json!("/nonexistent/repo")), vec![":2:", "field `repo`", "does not exist"]),
        (
            with("repo", serde_json::json!("file:///nonexistent/repo.git")),
            vec![":2:", "field `repo`", "cannot be read"],
        ),
        (with("base", serde_json::json!("no-such-branch")), vec![":2:", "field `base`"]),
        (with("repo", serde_json::json!("/")), vec![":2:", "field `repo`", "not a git repository"]),
        (with("prompt", serde_json::json!("x".repeat(200_000))), vec![":2:", "field `prompt`", "at most"]),
        (with("prompt", serde_json::json!("\"".repeat(90_000))), vec![":2:", "field `prompt`", "as JSON"]),
        (with("id", serde_json::json!("i".repeat(300))), vec![":2:", "field `id`", "at most"]),
        (with("prompt", serde_json::json!("a\u{0}b")), vec![":2:", "field `prompt`", "NUL"]),
        (with("base_url", serde_json::json!("not a url")), vec![":2:", "field `base_url`"]),
    ];
    for (second, expected) in cases {
        let home = home();
        let tasks = home.root.join("tasks.jsonl");
        std::fs::write(&tasks, format!("{good}\n{second}\n")).unwrap();
        let out = output(batch(&home, &tasks, &["--workers", "1"])).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{second}: {stderr}");
        for part in expected {
            assert!(stderr.contains(part), "{second}: `{part}` not in {stderr}");
        }
        assert!(!home.out.join("results.jsonl").exists(), "{second}: results were written");
        assert_eq!(fixture.requests(), 0, "{second}: a task ran");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_workers_and_an_empty_task_file_are_refused() {
    let home = home();
    let fixture = solvable(1, 1).await;
    let out = output(batch(&home, &fixture.tasks_file, &["--workers", "0"])).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--workers"), "{}", text(&out.stderr));
    let empty = home.root.join("empty.jsonl");
    std::fs::write(&empty, "\n\n").unwrap();
    let out = output(batch(&home, &empty, &[])).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("empty.jsonl: the task file has no tasks"), "{stderr}");
    assert_eq!(fixture.requests(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relative_out_resolves_the_task_and_the_test_runs_sandboxed() {
    let home = home();
    // A second task's workspace, the results folder and Lathe's home hold secrets; the patch
    // rewrites the check to read them and to write outside its clone, then pass.
    let sibling = std::env::temp_dir().join("lathe-batch/other.1.1/ws");
    std::fs::create_dir_all(&sibling).unwrap();
    std::fs::write(sibling.join("planted.txt"), "SECRET-SIBLING\n").unwrap();
    std::fs::write(home.home.join("planted-home.txt"), "SECRET-HOME\n").unwrap();
    let escaped = home.home.join("escaped.txt");
    let check = format!(
        "cat {sibling}/planted.txt; cat {lathe_home}/planted-home.txt; ls {out}; echo x > {escaped}; \
         echo CHECK-RAN\n",
        sibling = sibling.display(),
        lathe_home = home.home.display(),
        out = home.out.display(),
        escaped = escaped.display(),
    );
    let write = |path: &str, content: &str| serde_json::json!({"tool_calls": [{"id": format!("w_{path}"), "name": "write_file", "arguments": {"path": path, "content": content}}]});
    let read = serde_json::json!({"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "check.sh"}}]});
    let turns = vec![
        write("answer.txt", "42\n"),
        read,
        write("check.sh", &check),
        serde_json::json!({"text": "Fixed."}),
    ];
    let fixture = batch_fixtures::custom(vec![("rel".into(), Kind::Solvable, turns)]).await;
    let out =
        output(batch_to(&home, &fixture.tasks_file, std::ffi::OsStr::new("out"), &["--workers", "1"])).await;
    let _ = std::fs::remove_dir_all(std::env::temp_dir().join("lathe-batch/other.1.1"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows = rows(&home);
    assert_eq!(rows.len(), 1);
    let log = std::fs::read_to_string(home.out.join("tasks/rel/test.log")).unwrap_or_default();
    let agent = std::fs::read_to_string(home.out.join("tasks/rel/agent.jsonl")).unwrap_or_default();
    assert!(log.contains("CHECK-RAN"), "the patched check did not run: {log}\n{}\n{agent}", rows[0]);
    assert_eq!(rows[0]["status"], "resolved", "{log}");
    assert!(!log.contains("SECRET-SIBLING"), "the test read another workspace: {log}");
    assert!(!log.contains("SECRET-HOME"), "the test read Lathe's home: {log}");
    assert!(!log.contains("results.jsonl"), "the test listed the results: {log}");
    assert!(!escaped.exists(), "the test wrote outside its clone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_results_disk_stops_the_batch_with_the_rows_so_far_intact() {
    let fixture = solvable(12, 1).await;
    let home = home();
    // `ulimit -f 4`: no file this batch writes may grow past 4 blocks; the row that would cross
    // it fails to write (EFBIG), as on a full disk.
    let command = batch(&home, &fixture.tasks_file, &["--workers", "1"]);
    let program = command.get_program().to_owned();
    let args: Vec<_> = command.get_args().map(|a| a.to_owned()).collect();
    let mut limited = Command::new("sh");
    limited.arg("-c").arg("ulimit -f 4 && exec \"$0\" \"$@\"").arg(program).args(args);
    limited.current_dir(&home.root).env("LATHE_HOME", &home.home).env("HOME", &home.root);
    limited.env_remove("ANTHROPIC_API_KEY").env_remove("LATHE_PROVIDER").stdin(Stdio::null());
    let out = output(limited).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write a result row"), "{stderr}");
    let rows = rows(&home);
    assert!(!rows.is_empty() && rows.len() < 12, "{} rows", rows.len());
    assert!(stderr.contains(&format!("stopped with {} rows", rows.len())), "{stderr}");
    // The task whose row failed ran; none after it started.
    let started = std::fs::read_dir(home.out.join("tasks")).unwrap().count();
    assert_eq!(started, rows.len() + 1, "tasks went on starting after the failed write");
}

/// `lathe batch-task --task-json TASK --out OUT ARGS` with the test's home.
fn batch_task(home: &Home, task: &Value, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(["batch-task", "--task-json", &task.to_string(), "--out"])
        .arg(&home.out)
        .args(args)
        .current_dir(&home.root)
        .env("LATHE_HOME", &home.home)
        .env("HOME", &home.root)
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null());
    command
}

/// A fixture line merged as `lathe batch` hands it to `batch-task`.
fn merged(line: &Value) -> Value {
    let mut task = line.clone();
    task["provider"] = "anthropic".into();
    task["model"] = "claude-sonnet-4-5".into();
    task["permission_mode"] = "accept-edits".into();
    task
}

#[tokio::test]
async fn batch_task_prints_exactly_one_row_and_writes_the_tasks_files() {
    let fixture = solvable(1, 1).await;
    let home = home();
    let task = merged(&fixture.tasks[0].line);
    let out = output(batch_task(&home, &task, &["--attempt", "2", "--node", "n1"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let row: Value = serde_json::from_str(stdout.trim()).expect("row");
    for field in [
        "id",
        "status",
        "subtype",
        "turns",
        "tool_calls",
        "input_tokens",
        "cached_tokens",
        "output_tokens",
        "cost_usd",
        "agent_s",
        "test_s",
        "patch_bytes",
        "attempt",
        "node",
    ] {
        assert!(row.get(field).is_some(), "no `{field}` in {row}");
    }
    assert_eq!((row["id"].as_str(), row["status"].as_str()), (Some("s01"), Some("resolved")), "{row}");
    assert_eq!((row["subtype"].as_str(), row["attempt"].as_u64()), (Some("success"), Some(2)));
    assert_eq!(
        (row["node"].as_str(), row["turns"].as_u64(), row["tool_calls"].as_u64()),
        (Some("n1"), Some(2), Some(1))
    );
    let dir = home.out.join("tasks/s01");
    for file in ["session.jsonl", "patch.diff", "agent.jsonl", "test.log"] {
        assert!(dir.join(file).is_file(), "no {file}");
    }
    assert!(std::fs::read_to_string(dir.join("patch.diff")).unwrap().contains("+42"));
    // The workspace was a scratch clone: the repository itself is untouched.
    assert!(!fixture.tasks[0].repo.join("answer.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_dies_with_a_killed_batch_task() {
    let fixture = batch_fixtures::tasks(vec![("h01".into(), Kind::Hanging)]).await;
    let home = home();
    let mut task = merged(&fixture.tasks[0].line);
    task["timeout_s"] = serde_json::json!(120);
    let mut child = batch_task(&home, &task, &[]).stdout(Stdio::null()).spawn().expect("spawn");
    let out_dir = home.out.display().to_string();
    let sleeping = || {
        let comm = |pid: &u32| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        processes_mentioning(&out_dir).iter().any(|pid| comm(pid).trim() == "sleep")
    };
    until(30, "the agent's command to run", sleeping).await;
    child.kill().expect("kill");
    child.wait().expect("wait");
    until(20, "the agent and its command to end", || processes_mentioning(&out_dir).is_empty()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_the_progress_is_a_bar_with_counts_and_cost_and_otherwise_plain_lines() {
    let fixture = solvable(2, 2).await;
    let home = home();
    let command = batch(&home, &fixture.tasks_file, &["--workers", "1"]);
    let line: Vec<String> = std::iter::once(command.get_program().to_string_lossy().into_owned())
        .chain(command.get_args().map(|a| format!("'{}'", a.to_string_lossy())))
        .collect();
    // `script` gives the batch a pseudo-terminal as stdout and copies what it wrote.
    let mut terminal = Command::new("script");
    terminal.args(["-qfec", &line.join(" "), "/dev/null"]).current_dir(&home.root);
    terminal.env("LATHE_HOME", &home.home).env("HOME", &home.root).env_remove("ANTHROPIC_API_KEY");
    let out = output(terminal).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let screen = text(&out.stdout);
    assert!(
        screen.contains("\r[############............] 1/2 done · 0 running · 0 failed · $0.0"),
        "{screen:?}"
    );
    assert!(screen.contains("] 2/2 done · 0 running · 0 failed · $0.0"), "{screen:?}");
    assert!(!screen.contains("[1/2] s01"), "plain lines on a terminal: {screen:?}");

    let plain = output(batch(&home, &fixture.tasks_file, &["--workers", "1", "--redo"])).await;
    let lines = text(&plain.stdout);
    assert!(lines.contains("] s01 resolved (") || lines.contains("] s02 resolved ("), "{lines}");
    assert!(lines.contains("[2/2] ") && !lines.contains('\r'), "{lines:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_an_empty_patch_a_provider_error_and_a_task_without_test_get_their_own_status() {
    let fix = batch_fixtures::turns_for(Kind::Solvable, 0);
    let specs = vec![
        ("limits".to_string(), Kind::Solvable, fix.clone()),
        ("nothing".to_string(), Kind::Solvable, vec![serde_json::json!({"text": "Nothing to do."})]),
        (
            "broken".to_string(),
            Kind::Solvable,
            vec![serde_json::json!({"error": {"status": 500, "message": "down"}})],
        ),
        ("untested".to_string(), Kind::Solvable, fix),
    ];
    let mut fixture = batch_fixtures::custom(specs).await;
    fixture.tasks[0].line["max_turns"] = serde_json::json!(1);
    fixture.tasks[3].line.as_object_mut().unwrap().remove("test");
    let tasks = fixture.subset("statuses.jsonl", &["limits", "nothing", "broken", "untested"]);
    let home = home();
    let out = output(batch(&home, &tasks, &["--workers", "2"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows = rows(&home);
    let status = |id: &str| {
        let row = rows.iter().find(|r| r["id"] == id).unwrap();
        (row["status"].as_str().unwrap().to_string(), row["subtype"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(status("limits"), ("limits".into(), "error_max_turns".into()));
    assert_eq!(status("nothing"), ("empty_patch".into(), "success".into()));
    assert_eq!(status("broken"), ("error".into(), "error_api".into()));
    assert_eq!(status("untested").0, "unresolved");
    let summary = read_json(&home.out.join("summary.json"));
    assert_eq!(summary["cost_per_resolved_usd"], Value::Null);
    assert_eq!(summary["by_status"]["limits"], 1);
}

/// A base on another branch than the cloned one, a prompt that starts with `-`, and an agent that
/// plants a Python user-site hook in the home folder to make the test pass: the first two
/// resolve, the third does not (the test runs with a home and temp folder of its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_base_a_dashed_prompt_and_a_planted_home_hook_are_judged_on_the_patch_alone() {
    let home = home();
    let user_site = Command::new("python3")
        .args(["-c", "import site; print(site.getusersitepackages())"])
        .env("HOME", &home.root)
        .output()
        .expect("python3");
    let user_site = text(&user_site.stdout).trim().to_string();
    assert!(user_site.starts_with(&home.root.display().to_string()), "{user_site}");
    let fix = batch_fixtures::turns_for(Kind::Solvable, 0);
    let plant = serde_json::json!({"tool_calls": [
        {"id": "p1", "name": "write_file", "arguments": {"path": "answer.txt", "content": "43\n"}},
        {"id": "p2", "name": "write_file", "arguments": {"path": format!("{user_site}/usercustomize.py"),
                                                        "content": "import os\nos._exit(0)\n"}}]});
    let specs = vec![
        ("branch-local".to_string(), Kind::Solvable, fix.clone()),
        ("branch-url".to_string(), Kind::Solvable, fix.clone()),
        ("dashed".to_string(), Kind::Solvable, fix),
        ("planted".to_string(), Kind::Solvable, vec![plant, serde_json::json!({"text": "Fixed."})]),
    ];
    let mut fixture = batch_fixtures::custom(specs).await;
    for task in &mut fixture.tasks[..2] {
        batch_fixtures::git(&task.repo, &["checkout", "-q", "-b", "feature"]);
        std::fs::write(task.repo.join("NOTE"), "on the feature branch\n").expect("note");
        batch_fixtures::git(&task.repo, &["add", "-A"]);
        batch_fixtures::git(&task.repo, &["commit", "-q", "-m", "feature"]);
        batch_fixtures::git(&task.repo, &["checkout", "-q", "main"]);
        task.line["base"] = serde_json::json!("feature");
    }
    fixture.tasks[2].line["prompt"] = serde_json::json!("- make the check pass\n- keep it short");
    fixture.tasks[3].line["test"] =
        serde_json::json!("python3 -c \"import sys; sys.exit(open('answer.txt').read().strip() != '42')\"");
    let tasks = fixture.subset("edges.jsonl", &["branch-local", "branch-url", "dashed", "planted"]);
    let out = output(batch(&home, &tasks, &["--workers", "2"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows = rows(&home);
    let status = |id: &str| rows.iter().find(|r| r["id"] == id).map(|r| r["status"].clone()).unwrap();
    assert_eq!(status("branch-local"), "resolved", "{rows:?}");
    assert_eq!(status("branch-url"), "resolved", "{rows:?}");
    assert_eq!(status("dashed"), "resolved", "{rows:?}");
    let asked = fixture.tasks[2].server.requests()[0].body.to_string();
    assert!(asked.contains("- make the check pass"), "{asked}");
    assert!(
        std::path::Path::new(&user_site).join("usercustomize.py").is_file(),
        "the agent's planted hook was written (else this test shows nothing)"
    );
    assert_eq!(status("planted"), "unresolved", "{rows:?}");
}

/// A second batch on a results folder another batch is writing to is refused (exit 2, nothing
/// run); the first one ends with one row a task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_batch_on_the_same_results_folder_is_refused_while_the_first_runs() {
    let fixture = batch_fixtures::tasks(vec![("slow".to_string(), Kind::Hanging)]).await;
    let home = home();
    let mut first = batch(&home, &fixture.tasks_file, &["--workers", "1"]);
    first.stdout(Stdio::null()).stderr(Stdio::null());
    let mut first = first.spawn().expect("first batch");
    until(60, "the first batch's agent asks the model", || fixture.requests() > 0).await;
    let second = output(batch(&home, &fixture.tasks_file, &["--workers", "1"])).await;
    assert_eq!(second.status.code(), Some(2), "{}", text(&second.stderr));
    assert!(text(&second.stderr).contains("another lathe batch"), "{}", text(&second.stderr));
    let status = tokio::task::spawn_blocking(move || first.wait()).await.expect("join").expect("wait");
    assert!(status.success(), "{status}");
    assert_eq!(fixture.requests(), 1, "the second batch ran nothing");
    let rows = rows(&home);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "timeout");
}

/// A test that runs past `timeout_s` is killed: the task is unresolved and its test.log says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_past_its_time_limit_is_killed_and_test_log_says_so() {
    let fix = batch_fixtures::turns_for(Kind::Solvable, 0);
    let mut fixture = batch_fixtures::custom(vec![("slowtest".to_string(), Kind::Solvable, fix)]).await;
    fixture.tasks[0].line["test"] = serde_json::json!("sleep 600");
    fixture.tasks[0].line["timeout_s"] = serde_json::json!(3);
    let tasks = fixture.subset("slow.jsonl", &["slowtest"]);
    let home = home();
    let out = output(batch(&home, &tasks, &["--workers", "1"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rows(&home)[0]["status"], "unresolved");
    let log = std::fs::read_to_string(home.out.join("tasks/slowtest/test.log")).expect("test.log");
    assert!(log.contains("ran past timeout_s (3 s) and was killed"), "{log}");
}

/// `lathe -C DIR batch tasks.jsonl --out out`: the task file and --out are taken from DIR.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minus_c_takes_the_task_file_and_out_from_its_directory() {
    let fixture = solvable(1, 1).await;
    let home = home();
    std::fs::copy(&fixture.tasks_file, home.root.join("tasks.jsonl")).expect("task file");
    let mut command =
        batch_to(&home, Path::new("tasks.jsonl"), std::ffi::OsStr::new("out"), &["--workers", "1"]);
    command.arg("-C").arg(&home.root).current_dir("/");
    let out = output(command).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rows(&home).len(), 1, "the rows are in DIR/out");
    let mut command = batch_to(&home, Path::new("tasks.jsonl"), std::ffi::OsStr::new("out"), &[]);
    command.arg("-C").arg(home.root.join("no-such-dir")).current_dir("/");
    let out = output(command).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("-C "), "{}", text(&out.stderr));
}
