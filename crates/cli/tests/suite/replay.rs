//! End-to-end replay of real recorded agent runs (`shared/replay/FORMAT.md` §3).
//!
//! For every `R*.json` case: seed a temp workspace, serve the case with `lathe-mock` in replay mode,
//! run the real `lathe` binary headless with `--yolo` against it (one more `--continue` run per user
//! injection), then check the mock's stats, every call's `expect`, and the oracles. Cases are
//! discovered from the folder, so new ones are picked up without code changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lathe_mock::{MockServer, Mode, ReplayCase};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The replay folder: `$LATHE_REPLAY_DIR`, else `shared/replay` beside the repository.
pub fn replay_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LATHE_REPLAY_DIR") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/replay")
}

/// Every case file, sorted by name.
pub fn cases() -> Vec<PathBuf> {
    let dir = replay_dir();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot read replay cases in {}: {error}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension().is_some_and(|ext| ext == "json")
                && path.file_name().is_some_and(|name| name.to_string_lossy().starts_with('R'))
        })
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no replay cases found in {}", dir.display());
    cases
}

const GIT_ENV: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "Lathe Replay"),
    ("GIT_AUTHOR_EMAIL", "replay@lathe.invalid"),
    ("GIT_COMMITTER_NAME", "Lathe Replay"),
    ("GIT_COMMITTER_EMAIL", "replay@lathe.invalid"),
];

/// Runs one case over `provider` (`anthropic`, `openai`, `responses`); returns every problem found.
pub async fn run_case(case_path: &Path, provider: &str) -> Vec<String> {
    let text = std::fs::read_to_string(case_path).expect("case file");
    let case: Value = serde_json::from_str(&text).expect("case json");
    let id = case["id"].as_str().unwrap_or("?").to_string();
    let tmp = tempfile::tempdir().expect("tempdir");
    let workspace = tmp.path().join("ws");
    let home = tmp.path().join("lathe-home");
    std::fs::create_dir_all(&workspace).expect("workspace");
    std::fs::create_dir_all(&home).expect("home");
    // A lower default shell timeout keeps commands that only a timeout ends (pytest --pdb…) short.
    std::fs::write(home.join("config.toml"), "shell_timeout_ms = 30000\n[retry]\nmax_retries = 0\n")
        .expect("config");
    let env: Vec<(String, String)> = GIT_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain(
            [("PIP_NO_INDEX", "1"), ("CARGO_NET_OFFLINE", "true"), ("PIP_DISABLE_PIP_VERSION_CHECK", "1")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        )
        .chain(
            case["harness_env"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())),
        )
        .collect();

    let seed_commit = seed(&case, &workspace, &env);
    let server = MockServer::start(Mode::Replay(ReplayCase::load(case_path).expect("load case")))
        .await
        .expect("mock server");
    let base_url = match provider {
        "anthropic" => server.url(),
        _ => format!("{}/v1", server.url()),
    };
    let turns = case["turns"].as_array().cloned().unwrap_or_default();
    let mut prompts = vec![case["prompt"].as_str().unwrap_or_default().to_string()];
    prompts.extend(turns.iter().filter_map(|turn| turn["user_injection"].as_str().map(str::to_string)));

    let mut problems = Vec::new();
    let mut results: BTreeMap<String, Value> = BTreeMap::new();
    for (index, prompt) in prompts.iter().enumerate() {
        let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
        command
            .args(["-p", prompt, "--yolo", "--output-format", "stream-json", "--provider", provider])
            .args(["--base-url", &base_url, "--model", "replay-model", "--max-turns"])
            .arg((turns.len() + 5).to_string())
            .arg("-C")
            .arg(&workspace)
            .env("LATHE_HOME", &home)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null());
        if index > 0 {
            command.arg("--continue");
        }
        let output =
            tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe");
        let stdout = String::from_utf8_lossy(&output.stdout);
        for line in stdout.lines() {
            let Ok(event) = serde_json::from_str::<Value>(line) else {
                problems.push(format!("{id}/{provider}: stdout line is not JSON: {line}"));
                continue;
            };
            if event["type"] == "tool_result" {
                results.insert(event["id"].as_str().unwrap_or_default().to_string(), event);
            }
        }
        if !output.status.success() {
            problems.push(format!(
                "{id}/{provider}: run {index} exited {:?}; stderr: {}; last line: {}",
                output.status.code(),
                String::from_utf8_lossy(&output.stderr).trim(),
                stdout.lines().last().unwrap_or("")
            ));
            break;
        }
    }

    let stats = server.stats();
    if !stats.done
        || stats.pairing_errors != 0
        || stats.extra_requests != 0
        || stats.turns_served != turns.len()
        || !stats.expect_mismatches.is_empty()
        || !stats.errors.is_empty()
    {
        problems.push(format!(
            "{id}/{provider}: mock stats {}",
            serde_json::to_string(&stats).unwrap_or_default()
        ));
    }
    check_expects(&id, provider, &turns, &results, &mut problems);
    check_oracles(&id, &case["oracles"], &workspace, seed_commit.as_deref(), &mut problems);
    problems
}

fn seed(case: &Value, workspace: &Path, env: &[(String, String)]) -> Option<String> {
    for (path, content) in case["seed_files"].as_object().into_iter().flatten() {
        let target = workspace.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).expect("seed dir");
        }
        std::fs::write(&target, content.as_str().unwrap_or_default()).expect("seed file");
    }
    for path in case["seed_executable"].as_array().into_iter().flatten() {
        let target = workspace.join(path.as_str().unwrap_or_default());
        let status = Command::new("chmod").arg("755").arg(&target).status().expect("chmod");
        assert!(status.success());
    }
    if case["seed_git"].as_bool() != Some(true) {
        return None;
    }
    let git = |args: &[&str]| {
        let output = Command::new("git")
            .args(args)
            .current_dir(workspace)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .output()
            .expect("git");
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "seed"]);
    Some(git(&["rev-parse", "HEAD"]))
}

fn check_expects(
    id: &str,
    provider: &str,
    turns: &[Value],
    results: &BTreeMap<String, Value>,
    problems: &mut Vec<String>,
) {
    for call in turns.iter().flat_map(|turn| turn["calls"].as_array().cloned().unwrap_or_default()) {
        let call_id = call["id"].as_str().unwrap_or_default();
        let expect = call["expect"].as_str().unwrap_or("any");
        let Some(result) = results.get(call_id) else {
            problems.push(format!("{id}/{provider}: no tool_result event for call {call_id}"));
            continue;
        };
        let failed = if call["name"] == "shell" {
            result["exit_code"].as_i64() != Some(0)
        } else {
            result["is_error"].as_bool() == Some(true)
        };
        let ok = match expect {
            "ok" => !failed,
            "error" => failed,
            _ => true,
        };
        if !ok {
            problems.push(format!(
                "{id}/{provider}: call {call_id} ({}) expected {expect}, got status {} exit {} output: {}",
                call["name"],
                result["status"],
                result["exit_code"],
                result["output"].as_str().unwrap_or_default().chars().take(300).collect::<String>()
            ));
        }
    }
}

fn check_oracles(
    id: &str,
    oracles: &Value,
    workspace: &Path,
    seed_commit: Option<&str>,
    problems: &mut Vec<String>,
) {
    for (path, expected) in oracles["final_files_sha256"].as_object().into_iter().flatten() {
        let allowed: Vec<&str> = match expected {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        match std::fs::read(workspace.join(path)) {
            Ok(bytes) => {
                let got = hex::encode(Sha256::digest(&bytes));
                if !allowed.contains(&got.as_str()) {
                    problems.push(format!("{id}: {path} has sha256 {got}, expected {allowed:?}"));
                }
            }
            Err(error) => problems.push(format!("{id}: {path} missing: {error}")),
        }
    }
    for path in oracles["absent_files"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if workspace.join(path).exists() {
            problems.push(format!("{id}: {path} should not exist"));
        }
    }
    for path in oracles["executable"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(workspace.join(path)).map(|m| m.permissions().mode()).unwrap_or(0);
        if mode & 0o111 == 0 {
            problems.push(format!("{id}: {path} should be executable (mode {mode:o})"));
        }
    }
    if let (Some(expected), Some(seed)) = (oracles["final_diff"].as_str(), seed_commit) {
        let paths: Vec<String> = expected
            .lines()
            .filter_map(|line| line.strip_prefix("diff --git a/"))
            .flat_map(|rest| {
                let (a, b) = rest.split_once(" b/").unwrap_or((rest, rest));
                [a.to_string(), b.to_string()]
            })
            .collect();
        let git = |args: &[&str]| {
            Command::new("git").args(args).args(&paths).current_dir(workspace).output().expect("git")
        };
        let _ = git(&["add", "-A", "--"]);
        let diff = git(&["diff", "--cached", seed, "--"]);
        let normalise = |text: &str| -> String {
            text.lines()
                .filter(|line| !line.starts_with("index "))
                .collect::<Vec<_>>()
                .join("\n")
                .trim()
                .to_string()
        };
        let got = normalise(&String::from_utf8_lossy(&diff.stdout));
        if got != normalise(expected) {
            problems.push(format!(
                "{id}: final diff differs\n--- expected\n{}\n--- got\n{got}",
                normalise(expected)
            ));
        }
    }
}

async fn run_all(provider: &str, filter: impl Fn(&Path) -> bool) {
    let mut problems = Vec::new();
    let mut ran = 0;
    for case in cases().into_iter().filter(|case| filter(case)) {
        ran += 1;
        problems.extend(run_case(&case, provider).await);
    }
    assert!(ran > 0, "no case ran");
    assert!(problems.is_empty(), "{} problem(s) over {provider}:\n{}", problems.len(), problems.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_replay_case_passes_over_anthropic() {
    run_all("anthropic", |_| true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_replay_case_passes_over_openai_chat() {
    run_all("openai", |_| true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_cases_pass_over_openai_responses() {
    // The three with the most varied traffic: parallel calls and stop hooks, expected errors, a chat.
    let picked = ["R2.json", "R14.json", "R21.json"];
    run_all("responses", |case| case.file_name().is_some_and(|name| picked.iter().any(|p| name == *p))).await;
}
