//! Permissions end to end: the real `lathe -p` binary against `lathe-mock`, rules in
//! `.lathe/settings.json` and `.claude/settings.json` of a real project, real `bash`, and the files on
//! disk afterwards. The project lives outside the temp dir (which tools may write) so that "outside
//! the workspace" means outside.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use lathe_mock::{MockServer, Mode, Script};
use serde_json::{Value, json};

struct Project {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    lathe_home: PathBuf,
    ws: PathBuf,
    out: PathBuf,
}

fn project() -> Project {
    let tmp = lathe_mock::fixture::outside_tempdir(env!("CARGO_TARGET_TMPDIR"));
    let base = tmp.path().canonicalize().expect("canonical");
    let (home, lathe_home, ws, out) =
        (base.join("home"), base.join("lathe"), base.join("ws"), base.join("outside"));
    for dir in [&home, &lathe_home, &ws, &out] {
        std::fs::create_dir_all(dir).expect("dir");
    }
    for outside in [&home, &out] {
        assert!(
            !lathe_mock::fixture::inside_a_temp_dir(outside) && !outside.starts_with(&ws),
            "the outside fixture {} lies inside an allowed root",
            outside.display()
        );
    }
    std::fs::write(lathe_home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    std::fs::write(ws.join("notes.txt"), "keep me\n").expect("notes");
    std::fs::write(out.join("victim.txt"), "untouched\n").expect("victim");
    Project { _tmp: tmp, home, lathe_home, ws, out }
}

fn settings(project: &Project, file: &str, value: Value) {
    let path = project.ws.join(file);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, value.to_string()).expect("settings");
}

fn lathe(project: &Project, server: &MockServer, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(["--provider", "anthropic", "--base-url", &server.url(), "--output-format", "stream-json"])
        .args(args)
        .arg("-C")
        .arg(&project.ws)
        .env("HOME", &project.home)
        .env("LATHE_HOME", &project.lathe_home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .env_remove("LATHE_PERMISSION_MODE")
        .env_remove("LATHE_SANDBOX_BACKEND")
        .stdin(Stdio::null());
    command
}

async fn output(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe")
}

async fn scripted(calls: Vec<Value>) -> MockServer {
    let turns = json!([{ "tool_calls": calls }, { "text": "done" }]);
    let script = Script::from_json(&json!({ "turns": turns }).to_string()).expect("script");
    MockServer::start(Mode::Scripted(script)).await.expect("mock")
}

fn shell(id: &str, command: &str) -> Value {
    json!({"id": id, "name": "shell", "arguments": {"command": command}})
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

/// The status of each tool result, by call id.
fn statuses(lines: &[Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| (l["id"].as_str().unwrap_or("").to_string(), l["status"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn output_of<'a>(lines: &'a [Value], id: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l["type"] == "tool_result" && l["id"] == id)
        .and_then(|l| l["output"].as_str())
        .unwrap_or("")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

mod git_commit;
mod sandbox_state;

#[tokio::test]
async fn each_mode_with_rules_from_both_settings_files() {
    // (mode flag, expected status of c1…c6)
    let table: [(&[&str], [&str; 6]); 5] = [
        (
            &["--permission-mode", "default"],
            ["completed", "completed", "denied", "denied", "denied", "denied"],
        ),
        (
            &["--permission-mode", "accept-edits"],
            ["completed", "completed", "denied", "denied", "denied", "completed"],
        ),
        (&["--permission-mode", "plan"], ["completed", "denied", "denied", "denied", "denied", "denied"]),
        (
            &["--permission-mode", "dont-ask"],
            ["completed", "completed", "denied", "denied", "denied", "denied"],
        ),
        (&["--yolo"], ["completed", "completed", "denied", "denied", "completed", "completed"]),
    ];
    for (flags, expected) in table {
        let p = project();
        settings(&p, ".lathe/settings.json", json!({"permissions": {"allow": ["Bash(touch allowed.txt)"]}}));
        settings(
            &p,
            ".claude/settings.json",
            json!({"permissions": {"deny": ["Bash(rm *)"], "allow": ["Bash(rm *)"]}}),
        );
        let victim = p.out.join("victim.txt");
        let server = scripted(vec![
            shell("c1", "ls && cat notes.txt | wc -l && git status 2>/dev/null; pwd"),
            shell("c2", "touch allowed.txt"),
            shell("c3", "rm notes.txt"),
            shell("c4", &format!("echo pwned > {}", victim.display())),
            shell("c5", "touch other.txt"),
            json!({"id": "c6", "name": "write_file", "arguments": {"path": "edited.txt", "content": "hi\n"}}),
        ])
        .await;
        let out = output(lathe(&p, &server, &[&["-p", "go"], flags].concat())).await;
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {}", stderr(&out));
        let lines = lines(&out);
        let got: Vec<String> = statuses(&lines).into_iter().map(|(_, status)| status).collect();
        assert_eq!(got, expected, "{flags:?}\n{}", String::from_utf8_lossy(&out.stdout));
        // What a user sees on disk.
        assert!(output_of(&lines, "c1").contains("notes.txt"), "{flags:?}: {}", output_of(&lines, "c1"));
        assert_eq!(p.ws.join("allowed.txt").exists(), expected[1] == "completed", "{flags:?}");
        assert_eq!(std::fs::read_to_string(p.ws.join("notes.txt")).expect("notes"), "keep me\n", "{flags:?}");
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "untouched\n", "{flags:?}");
        assert_eq!(p.ws.join("other.txt").exists(), expected[4] == "completed", "{flags:?}");
        assert_eq!(p.ws.join("edited.txt").exists(), expected[5] == "completed", "{flags:?}");
        // The model is told why, and which rule or mode would allow it.
        assert!(output_of(&lines, "c3").contains("Bash(rm *)"), "{}", output_of(&lines, "c3"));
        assert!(output_of(&lines, "c4").contains("outside the workspace"), "{}", output_of(&lines, "c4"));
        if expected[4] == "denied" && flags[1] != "plan" {
            assert!(
                output_of(&lines, "c5").contains("Bash(touch *)"),
                "{flags:?}: {}",
                output_of(&lines, "c5")
            );
        }
        // The final result lists the denied calls.
        let result = lines.last().expect("result");
        let denied: Vec<&str> = result["permission_denials"]
            .as_array()
            .expect("denials")
            .iter()
            .filter_map(|d| d["tool_use_id"].as_str())
            .collect();
        let expected_denied: Vec<&str> = ["c1", "c2", "c3", "c4", "c5", "c6"]
            .into_iter()
            .zip(expected)
            .filter(|(_, s)| *s == "denied")
            .map(|(id, _)| id)
            .collect();
        assert_eq!(denied, expected_denied, "{flags:?}");
        let c3 = result["permission_denials"]
            .as_array()
            .expect("denials")
            .iter()
            .find(|d| d["tool_use_id"] == "c3");
        assert_eq!(c3.map(|d| &d["tool_input"]["command"]), Some(&json!("rm notes.txt")));
    }
}

#[tokio::test]
async fn deny_rules_block_disguised_commands_under_yolo_and_nothing_outside_changes() {
    let p = project();
    settings(
        &p,
        ".claude/settings.json",
        json!({"permissions": {"deny": ["Bash(rm *)", "Bash(git push *)"]}}),
    );
    let victim = p.out.join("victim.txt");
    let v = victim.display().to_string();
    let attempts = [
        format!("rm -f {v}"),
        format!("/bin/rm -f {v}"),
        format!("\\rm -f {v}"),
        format!("r''m -f {v}"),
        format!("ls && rm -f {v}"),
        format!("echo ok\nrm -f {v}"),
        format!("bash -c 'rm -f {v}'"),
        format!("eval rm -f {v}"),
        format!("echo {v} | xargs rm -f"),
        format!("env X=1 timeout 5 rm -f {v}"),
        format!("echo $(rm -f {v})"),
        "git -C . push origin main".to_string(),
    ];
    let calls: Vec<Value> = attempts.iter().enumerate().map(|(i, c)| shell(&format!("c{i}"), c)).collect();
    let server = scripted(calls).await;
    let out = output(lathe(&p, &server, &["-p", "clean up", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    for (id, status) in statuses(&lines) {
        assert_eq!(status, "denied", "{id}: {}", output_of(&lines, &id));
    }
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "untouched\n");
    assert_eq!(
        lines.last().expect("result")["permission_denials"].as_array().map(Vec::len),
        Some(attempts.len())
    );
}

#[tokio::test]
async fn the_models_shell_does_not_see_api_keys_or_tokens() {
    let p = project();
    let server = scripted(vec![shell("c1", "env > env.txt")]).await;
    let mut command = lathe(&p, &server, &["-p", "show env", "--yolo"]);
    command
        .env("ANTHROPIC_API_KEY", "sk-ant-secret")
        .env("OPENAI_API_KEY", "sk-openai-secret")
        .env("GITHUB_TOKEN", "ghp_secret")
        .env("MY_DB_PASSWORD", "hunter2")
        .env("LATHE_TEST_VISIBLE", "visible-value");
    let out = output(command).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let env = std::fs::read_to_string(p.ws.join("env.txt")).expect("env.txt");
    for secret in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "MY_DB_PASSWORD",
        "sk-ant-secret",
        "ghp_secret",
    ] {
        assert!(!env.contains(secret), "{secret} leaked into the command's environment");
    }
    assert!(env.contains("LATHE_TEST_VISIBLE=visible-value"), "{env}");
    // The provider still got the key.
    assert_eq!(server.requests()[0].headers.get("x-api-key").map(String::as_str), Some("sk-ant-secret"));
}

#[tokio::test]
async fn shell_env_keep_lets_a_listed_token_through() {
    let p = project();
    std::fs::write(
        p.lathe_home.join("config.toml"),
        "[retry]\nmax_retries = 0\n[shell_env]\nkeep = [\"GITHUB_TOKEN\"]\n",
    )
    .expect("config");
    let server = scripted(vec![shell("c1", "env > env.txt")]).await;
    let mut command = lathe(&p, &server, &["-p", "show env", "--yolo"]);
    command.env("GITHUB_TOKEN", "ghp_kept").env("NPM_TOKEN", "npm_secret");
    let out = output(command).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let env = std::fs::read_to_string(p.ws.join("env.txt")).expect("env.txt");
    assert!(env.contains("GITHUB_TOKEN=ghp_kept") && !env.contains("npm_secret"), "{env}");
}

/// A script that writes `path` in a way the shell analysis cannot see (so only the sandbox stops it).
fn sneaky_write(path: &Path) -> String {
    format!("python3 -c \"open('{}', 'w').write('x')\"", path.display())
}

async fn sandboxed_run(backend: Option<&str>) -> (Project, Vec<Value>, Output) {
    let p = project();
    settings(&p, ".lathe/settings.json", json!({"permissions": {"allow": ["Bash(python3 *)"]}}));
    let server = scripted(vec![
        shell("c1", &sneaky_write(&p.ws.join("inside.txt"))),
        shell("c2", &sneaky_write(&p.home.join("escaped.txt"))),
    ])
    .await;
    let mut command = lathe(&p, &server, &["-p", "write"]);
    if let Some(backend) = backend {
        command.env("LATHE_SANDBOX_BACKEND", backend);
    }
    let out = output(command).await;
    let lines = lines(&out);
    (p, lines, out)
}

#[tokio::test]
async fn the_sandbox_stops_writes_the_analysis_cannot_see() {
    assert!(
        Command::new("bwrap").arg("--version").output().is_ok(),
        "bubblewrap is not installed: run scripts/install-build-deps.sh"
    );
    for backend in [None, Some("landlock")] {
        let (p, lines, out) = sandboxed_run(backend).await;
        assert_eq!(out.status.code(), Some(0), "{backend:?}: {}", stderr(&out));
        let warned = lines.iter().any(|l| {
            l["type"] == "warning" && l["message"].as_str().is_some_and(|m| m.contains("no OS sandbox"))
        });
        if warned {
            // CI installs bubblewrap: there the sandbox itself must be tested, not its fallback.
            assert!(std::env::var_os("CI").is_none(), "{backend:?}: no OS sandbox works in CI: {lines:?}");
            eprintln!(
                "SKIPPED ({backend:?}): no OS sandbox works on this machine; only the fallback was tested"
            );
            // This kernel cannot sandbox: the allowed commands asked instead, so headless denied them.
            assert_eq!(
                statuses(&lines),
                [("c1".into(), "denied".into()), ("c2".into(), "denied".into())],
                "{backend:?}"
            );
            assert!(!p.ws.join("inside.txt").exists());
        } else {
            assert_eq!(statuses(&lines)[0].1, "completed", "{backend:?}");
            assert!(p.ws.join("inside.txt").exists(), "{backend:?}: {}", output_of(&lines, "c1"));
            assert!(
                output_of(&lines, "c2").contains("[sandbox:"),
                "{backend:?}: {}",
                output_of(&lines, "c2")
            );
        }
        assert!(
            !p.home.join("escaped.txt").exists(),
            "{backend:?}: the write outside the workspace got through"
        );
    }
}

#[tokio::test]
async fn without_a_sandbox_allowed_changes_ask_and_lathe_says_so_once() {
    let (p, lines, out) = sandboxed_run(Some("none")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(statuses(&lines), [("c1".into(), "denied".into()), ("c2".into(), "denied".into())]);
    assert!(output_of(&lines, "c1").contains("no OS sandbox"), "{}", output_of(&lines, "c1"));
    let warnings = lines.iter().filter(|l| l["type"] == "warning").count();
    assert_eq!(warnings, 1, "{lines:?}");
    assert!(!p.ws.join("inside.txt").exists() && !p.home.join("escaped.txt").exists());
}

#[tokio::test]
async fn a_broken_settings_file_is_reported_at_start_up_naming_the_file_and_the_rule() {
    let p = project();
    std::fs::create_dir_all(p.ws.join(".claude")).expect("dir");
    std::fs::write(p.ws.join(".claude/settings.json"), "{\"permissions\": {\"deny\": [\"Bash(rm -rf *\"]}}")
        .expect("write");
    let server = scripted(vec![shell("c1", "touch x.txt"), shell("c2", "ls")]).await;
    let out = output(lathe(&p, &server, &["-p", "go", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    let warning = lines.iter().find(|l| l["type"] == "warning").expect("warning line");
    let message = warning["message"].as_str().unwrap_or("");
    assert!(message.contains(".claude/settings.json") && message.contains("Bash(rm -rf *"), "{message}");
    assert_eq!(statuses(&lines), [("c1".into(), "denied".into()), ("c2".into(), "completed".into())]);
    assert!(!p.ws.join("x.txt").exists());
}

#[tokio::test]
async fn invalid_arguments_are_reported_as_invalid_not_as_denied() {
    let p = project();
    let server = scripted(vec![json!({"id": "c1", "name": "shell", "arguments": {"command": 42}})]).await;
    let out = output(lathe(&p, &server, &["-p", "go"])).await;
    let lines = lines(&out);
    assert_eq!(statuses(&lines), [("c1".into(), "failed".into())]);
    assert!(output_of(&lines, "c1").contains("invalid arguments"), "{}", output_of(&lines, "c1"));
    assert_eq!(lines.last().expect("result")["permission_denials"], json!([]));
}

#[tokio::test]
async fn substitutions_in_heredocs_and_expansions_and_programs_from_the_workspace_are_not_read_only() {
    let p = project();
    std::fs::create_dir_all(p.ws.join("tools")).expect("dir");
    std::fs::write(p.ws.join("tools/git"), "#!/bin/sh\ntouch fake-git-ran\n").expect("fake git");
    let mut permissions = std::fs::metadata(p.ws.join("tools/git")).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(p.ws.join("tools/git"), permissions).expect("chmod");
    let server = scripted(vec![
        shell("c1", "cat <<EOF\n$(touch heredoc-ran)\nEOF"),
        shell("c2", "echo \"${x:-`touch backtick-ran`}\""),
        shell("c3", "./tools/git status"),
        shell("c4", "cat <<'EOF'\n$(touch not-expanded)\nEOF"),
    ])
    .await;
    let out = output(lathe(&p, &server, &["-p", "go", "--permission-mode", "default"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = statuses(&lines(&out));
    let expected: Vec<(String, String)> =
        [("c1", "denied"), ("c2", "denied"), ("c3", "denied"), ("c4", "completed")]
            .iter()
            .map(|(id, status)| (id.to_string(), status.to_string()))
            .collect();
    assert_eq!(got, expected);
    for ran in ["heredoc-ran", "backtick-ran", "fake-git-ran", "not-expanded"] {
        assert!(!p.ws.join(ran).exists(), "{ran}");
    }
}
