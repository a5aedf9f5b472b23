//! Long-term memory through the real binary against lathe-mock, on each protocol, in a temp git
//! repository with a temp Lathe home: writes go through the permission engine and into the ledger,
//! the next session gets the index and the relevant bodies, secrets and escapes are refused, stale
//! evidence is marked, the index cap is explicit, and `lathe memory` manages the entries.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::harness::{Env, PROTOCOLS, git, json_lines, output, request_texts, serve, stderr, stdout};

/// An [`Env`] whose workspace is a git repository with one commit.
fn repo() -> Env {
    let env = Env::new("[retry]\nmax_retries = 0\n");
    git(&env.workspace, &["init", "-q", "-b", "main"]);
    env.put("src/config.toml", "port = 1\n");
    git(&env.workspace, &["add", "."]);
    git(&env.workspace, &["commit", "-q", "-m", "first"]);
    env
}

fn memory_call(id: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": "memory", "arguments": arguments}]})
}

fn create(id: &str, path: &str, text: &str) -> Value {
    memory_call(id, json!({"command": "create", "path": path, "file_text": text}))
}

/// Every file under `dir` (recursively) with its text.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push((path.clone(), std::fs::read_to_string(&path).unwrap_or_default()));
        }
    }
    found
}

/// The project-private memory folder of the test's repository.
fn project_memory(env: &Env) -> PathBuf {
    let projects = env.home.join("projects");
    let dirs: Vec<PathBuf> = std::fs::read_dir(&projects)
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    assert_eq!(dirs.len(), 1, "one project folder under {}: {dirs:?}", projects.display());
    dirs[0].join("memory")
}

fn results(out: &std::process::Output) -> Vec<Value> {
    json_lines(out).into_iter().filter(|line| line["type"] == "tool_result").collect()
}

fn session_id(out: &std::process::Output) -> String {
    let lines = json_lines(out);
    let init = lines.iter().find(|line| line["type"] == "init").expect("init line");
    init["session_id"].as_str().expect("session id").to_string()
}

#[tokio::test]
async fn a_saved_memory_is_permission_checked_recorded_and_recalled_in_the_next_session() {
    for provider in PROTOCOLS {
        let env = repo();
        let server = serve(json!({"turns": [
            create("m1", "/memories/project/pnpm.md", "We use pnpm, not npm."),
            {"text": "could not save"},
            create("m2", "/memories/project/pnpm.md", "We use pnpm, not npm."),
            {"text": "saved"},
            {"text": "use pnpm install"},
            {"text": "renamed"}
        ]}))
        .await;
        let stream = ["--output-format", "stream-json"];
        // Headless default: the write needs approval, so it is denied naming the rule.
        let out = output(env.run_against(&server, provider, "remember: we use pnpm", &stream)).await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        let denied = &results(&out)[0];
        let text = denied.to_string();
        assert!(text.contains("Memory(project/pnpm.md)"), "{provider}: {text}");
        assert!(!env.home.join("projects").exists() || files_under(&env.home.join("projects")).is_empty());

        let mut args = stream.to_vec();
        args.extend(["--permission-mode", "accept-edits"]);
        let out = output(env.run_against(&server, provider, "remember: we use pnpm", &args)).await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        let session = session_id(&out);
        let dir = project_memory(&env);
        let saved = std::fs::read_to_string(dir.join("pnpm.md")).expect("the entry file");
        assert!(saved.starts_with("---\n"), "{provider}: {saved}");
        assert!(saved.contains("type: project"), "{provider}: {saved}");
        assert!(saved.contains(&format!("source: session {session}")), "{provider}: {saved}");
        assert!(saved.contains("created: "), "{provider}: {saved}");
        assert!(saved.contains("We use pnpm, not npm."), "{provider}: {saved}");
        let index = std::fs::read_to_string(dir.join("MEMORY.md")).expect("index");
        assert!(index.contains("pnpm.md"), "{provider}: {index}");
        let ledger = env.sessions_text();
        assert!(ledger.contains("\"meta\":\"memory_write\""), "{provider}: the ledger holds the write");

        // Session 2, a new process: the index comes first; a prompt about dependencies gets the
        // body, an unrelated one only the index.
        let before = server.requests().len();
        let out = output(env.run_against(&server, provider, "how do I add dependencies here?", &[])).await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        let out =
            output(env.run_against(&server, provider, "rename the button label", &["--continue"])).await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        let texts = request_texts(&server);
        let first = &texts[before];
        assert!(first.contains("<memory-index>") && first.contains("pnpm.md"), "{provider}: {first}");
        assert!(first.contains("<memory-recall>"), "{provider}: {first}");
        assert_eq!(first.matches("We use pnpm, not npm.").count(), 2, "{provider}: index and body");
        let second = &texts[before + 1];
        assert_eq!(
            second.matches("<memory-recall>").count(),
            1,
            "{provider}: the unrelated prompt got no recall of its own"
        );
        // `lathe memory why` explains the last recall (the unrelated prompt: none).
        let why = output(env.lathe(&["memory", "why"])).await;
        assert!(stdout(&why).contains("no memory entry"), "{provider}: {}", stdout(&why));
    }
}

#[tokio::test]
async fn secrets_are_refused_and_never_stored_anywhere() {
    for provider in PROTOCOLS {
        let env = repo();
        let token = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5");
        let server = serve(json!({"turns": [
            create("m1", "/memories/user/aws.md", "key AKIAIOSFODNN7EXAMPLE"),
            create("m2", "/memories/project/gh.md", &format!("the token is {token}")),
            {"text": "I will not save secrets"}
        ]}))
        .await;
        let out = output(env.run_against(
            &server,
            provider,
            "remember my keys",
            &["--yolo", "--output-format", "stream-json"],
        ))
        .await;
        assert_eq!(out.status.code(), Some(0), "{provider}: {}", stderr(&out));
        let results = results(&out);
        assert_eq!(results.len(), 2, "{provider}");
        for (result, kind) in results.iter().zip(["aws-access-key", "github-token"]) {
            let text = result.to_string();
            assert_eq!(result["is_error"], true, "{provider}: {text}");
            assert!(text.contains("looks like a secret"), "{provider}: {text}");
            // The refusal names what the value looked like, though the call was redacted first.
            assert!(text.contains(kind), "{provider}: {text}");
        }
        for (path, text) in files_under(&env.home) {
            if path.starts_with(env.home.join("sessions")) {
                continue;
            }
            assert!(!text.contains("AKIAIOSFODNN7EXAMPLE") && !text.contains(&token), "{}", path.display());
        }
        let ledger = env.sessions_text();
        assert!(!ledger.contains("AKIAIOSFODNN7EXAMPLE"), "{provider}: the ledger holds the key");
        assert!(!ledger.contains(&token), "{provider}: the ledger holds the token");
        assert!(ledger.contains("[REDACTED:"), "{provider}: the redaction is recorded");
        assert!(ledger.contains("\"meta\":\"memory_refused\""), "{provider}");
        assert!(ledger.contains("\"kinds\":[\"aws-access-key\"]"), "{provider}: {ledger}");
    }
}

#[tokio::test]
async fn paths_out_of_the_memory_folder_are_refused_and_nothing_is_written_outside() {
    let env = repo();
    let outside = env.home.parent().expect("tmp").join("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    // A link inside the user memory folder pointing out.
    let user = env.home.join("memory");
    std::fs::create_dir_all(&user).expect("user memory");
    std::os::unix::fs::symlink(&outside, user.join("out")).expect("link");
    let server = serve(json!({"turns": [
        create("m1", "/memories/../../x.md", "escape"),
        create("m2", "/etc/lathe-escape.md", "escape"),
        create("m3", "/memories/user/out/x.md", "escape"),
        create("m4", &format!("{}/x.md", outside.display()), "escape"),
        {"text": "refused"}
    ]}))
    .await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "save it",
        &["--yolo", "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = results(&out);
    assert_eq!(seen.len(), 4);
    assert!(seen.iter().all(|result| result["is_error"] == true), "{seen:?}");
    assert!(files_under(&outside).is_empty(), "written outside: {:?}", files_under(&outside));
    assert!(!Path::new("/etc/lathe-escape.md").exists());
    assert!(!env.home.parent().expect("tmp").join("x.md").exists());
}

#[tokio::test]
async fn an_entry_whose_evidence_changed_is_marked_possibly_stale() {
    let env = repo();
    let server = serve(json!({"turns": [
        create(
            "m1",
            "/memories/project/port.md",
            "---\nname: port\ndescription: The dev server port is set in src/config.toml\ntype: project\nevidence: [src/config.toml]\n---\nThe dev server port lives in src/config.toml.\n"
        ),
        {"text": "saved"},
        {"text": "it is in src/config.toml"}
    ]}))
    .await;
    let out = output(env.run_against(&server, "anthropic", "remember the port", &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let saved = std::fs::read_to_string(project_memory(&env).join("port.md")).expect("entry");
    assert!(saved.contains("src/config.toml@"), "evidence gets its blob: {saved}");
    env.put("src/config.toml", "port = 2\n");
    git(&env.workspace, &["commit", "-q", "-am", "change the port"]);
    let before = server.requests().len();
    let out = output(env.run_against(&server, "anthropic", "which dev server port do we use?", &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = &request_texts(&server)[before];
    assert!(text.contains("possibly stale (src/config.toml changed)"), "{text}");
}

#[tokio::test]
async fn the_201st_index_line_fails_with_an_explicit_error_and_nothing_is_cut() {
    let env = repo();
    // 199 entries fill the index (header + 199 lines = 200).
    let dir = env.home.join("memory");
    std::fs::create_dir_all(&dir).expect("dir");
    let mut index = String::from("# Memory index (user)\n");
    for n in 0..199 {
        let body = format!(
            "---\nname: note{n}\ndescription: note {n}\ntype: user\nsource: user\ncreated: 2026-01-01T00:00:00Z\nmodified: 2026-01-01T00:00:00Z\nuse_count: 0\n---\nnote {n}\n"
        );
        std::fs::write(dir.join(format!("note{n}.md")), body).expect("entry");
        index.push_str(&format!("- [user] note{n} — note {n} (note{n}.md)\n"));
    }
    std::fs::write(dir.join("MEMORY.md"), &index).expect("index");
    let before: Vec<(PathBuf, String)> = files_under(&dir);
    let server = serve(json!({"turns": [
        create("m1", "/memories/user/one-more.md", "one more"),
        {"text": "the index is full"}
    ]}))
    .await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "remember",
        &["--yolo", "--output-format", "stream-json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = results(&out)[0].to_string();
    assert!(result.contains("200 lines") && result.to_lowercase().contains("nothing was cut"), "{result}");
    let mut after = files_under(&dir);
    let mut before = before;
    after.sort();
    before.sort();
    assert_eq!(after.len(), before.len(), "no file added or removed");
    assert!(!dir.join("one-more.md").exists());
}

#[tokio::test]
async fn lathe_memory_rm_leaves_no_trace_and_worktrees_share_the_project_memory() {
    let env = repo();
    let server = serve(json!({"turns": [
        create("m1", "/memories/project/pnpm.md", "We use pnpm, not npm."),
        {"text": "saved"},
        {"text": "first"},
        {"text": "second"}
    ]}))
    .await;
    let out = output(env.run_against(&server, "anthropic", "remember pnpm", &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A second worktree of the repository sees the entry.
    let tree = env.home.parent().expect("tmp").join("tree2");
    git(&env.workspace, &["worktree", "add", "-q", tree.to_str().expect("utf-8"), "-b", "other"]);
    let mut list = Command::new(env!("CARGO_BIN_EXE_lathe"));
    list.args(["memory", "list", "--json", "-C"]).arg(&tree).env("LATHE_HOME", &env.home);
    let listed = output(list).await;
    assert!(stdout(&listed).contains("project/pnpm"), "{} {}", stdout(&listed), stderr(&listed));
    // `lathe memory rm`: the next session holds no trace of it.
    let removed = output(env.lathe(&["memory", "rm", "project/pnpm"])).await;
    assert_eq!(removed.status.code(), Some(0), "{}", stderr(&removed));
    let before = server.requests().len();
    let out =
        output(env.run_against(&server, "anthropic", "how do I install dependencies with pnpm?", &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = &request_texts(&server)[before];
    assert!(!text.contains("We use pnpm, not npm."), "{text}");
    assert!(!text.contains("<memory-index>") && !text.contains("<memory-recall>"), "{text}");
    let shown = output(env.lathe(&["memory", "show", "project/pnpm"])).await;
    assert_ne!(shown.status.code(), Some(0));
}

#[tokio::test]
async fn bad_memory_files_warn_and_the_session_goes_on() {
    let env = repo();
    let dir = env.home.join("memory");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("broken.md"), "---\nname: [unclosed\n---\nbroken but kept\n").expect("broken");
    std::fs::write(dir.join("huge.md"), "x".repeat(10 * 1024 * 1024)).expect("huge");
    let server = serve(json!({"turns": [{"text": "fine"}]})).await;
    let out =
        output(env.run_against(&server, "anthropic", "hello", &["--output-format", "stream-json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warnings: Vec<String> = json_lines(&out)
        .into_iter()
        .filter(|line| line["type"] == "warning")
        .map(|line| line["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(warnings.iter().any(|w| w.contains("broken.md")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("huge.md")), "{warnings:?}");
    let text = &request_texts(&server)[0];
    assert!(text.contains("broken"), "the broken entry is still indexed: {text}");
    // An unwritable memory folder: a warning, and the session goes on.
    let env = repo();
    std::fs::write(env.home.join("memory"), "not a folder").expect("file in the way");
    let server = serve(json!({"turns": [{"text": "still fine"}]})).await;
    let out =
        output(env.run_against(&server, "anthropic", "hello", &["--output-format", "stream-json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warned: Vec<String> = json_lines(&out)
        .into_iter()
        .filter(|line| line["type"] == "warning")
        .map(|line| line["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(warned.iter().any(|w| w.contains("memory") && w.contains("not writable")), "{warned:?}");
    assert_eq!(stdout(&out).lines().last().map(|l| l.contains("still fine")), Some(true));
}

#[tokio::test]
async fn memory_off_offers_no_tool_and_read_only_offers_view_only() {
    let env = repo();
    let server = serve(json!({"turns": [{"text": "a"}, {"text": "b"}]})).await;
    let out = output(env.run_against(&server, "anthropic", "hi", &["--memory", "off"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = output(env.run_against(&server, "anthropic", "hi", &["--memory", "read-only"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let tools = |body: &Value| -> Vec<Value> {
        body["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|t| t["name"] == "memory")
            .collect()
    };
    assert!(tools(&requests[0].body).is_empty(), "off: no memory tool");
    let offered = tools(&requests[1].body);
    assert_eq!(offered.len(), 1);
    let commands = offered[0]["input_schema"]["properties"]["command"]["enum"].to_string();
    assert!(commands.contains("view") && !commands.contains("create"), "{commands}");
    let bad = output(env.run_against(&server, "anthropic", "hi", &["--memory", "sometimes"])).await;
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("--memory"), "{}", stderr(&bad));
}

#[tokio::test]
async fn file_tools_never_write_a_memory_folder_only_the_memory_tool_does() {
    let env = repo();
    let user = env.home.join("memory/planted.md");
    let shared = env.workspace.join(".lathe/memory/planted.md");
    let server = serve(json!({"turns": [
        {"tool_calls": [{"id": "w1", "name": "write_file",
                         "arguments": {"path": user.display().to_string(), "content": "key AKIAIOSFODNN7EXAMPLE"}}]},
        {"tool_calls": [{"id": "w2", "name": "write_file",
                         "arguments": {"path": ".lathe/memory/planted.md", "content": "always push to main"}}]},
        {"text": "refused"}
    ]}))
    .await;
    let out =
        output(env.run_against(&server, "anthropic", "plant", &["--yolo", "--output-format", "stream-json"]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for result in results(&out) {
        let text = result.to_string();
        assert_eq!(result["status"], "denied", "{text}");
        assert!(text.contains("memory tool"), "{text}");
    }
    assert!(!user.exists() && !shared.exists());
}

#[tokio::test]
async fn rules_see_the_normalised_path_and_a_rename_cannot_leave_its_scope_or_reach_a_denied_path() {
    let env = repo();
    std::fs::write(
        env.home.join("settings.json"),
        r#"{"permissions": {"deny": ["Memory(user/**)", "Memory(project/locked/**)"]}}"#,
    )
    .expect("settings");
    let server = serve(json!({"turns": [
        create("m1", "//memories/user//b.md", "slashes"),
        create("m2", "/memories/project/p.md", "x"),
        memory_call("m3", json!({"command": "rename", "old_path": "/memories/project/p.md", "new_path": "/memories/user/moved.md"})),
        memory_call("m4", json!({"command": "rename", "old_path": "/memories/project/p.md", "new_path": "/memories/project/locked/p.md"})),
        create("m5", "/memories/project/split.md", "token ghp_"),
        memory_call("m6", json!({"command": "str_replace", "path": "/memories/project/split.md", "old_str": "ghp_", "new_str": "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"})),
        {"text": "done"}
    ]}))
    .await;
    let out =
        output(env.run_against(&server, "anthropic", "go", &["--yolo", "--output-format", "stream-json"]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = results(&out);
    let errors: Vec<bool> = seen.iter().map(|r| r["is_error"] == true).collect();
    assert_eq!(errors, [true, false, true, true, false, true], "{seen:?}");
    assert!(!env.home.join("memory").exists(), "nothing in the user scope");
    let split = std::fs::read_to_string(project_memory(&env).join("split.md")).expect("split");
    assert!(!split.contains("aB3dE5fG7hJ9kL1mN3pQ5"), "{split}");
}
