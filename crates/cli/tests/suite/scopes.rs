//! Scopes that must bind, through the real `lathe -p` binary against `lathe-mock`, with real `bash`
//! and the files on disk afterwards: a scoped entry in an agent's `tools:`, a skill's or a custom
//! command's `allowed-tools` (`Bash(git diff *)`) grants only what it names, in every mode; and a
//! deny rule in the user's settings (`~/.claude/settings.json`, or `$CLAUDE_CONFIG_DIR`) binds, its
//! relative paths anchored at the working directory, for reads and for what searches show.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use lathe_mock::{MockServer, Mode, Script};
use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    user_home: PathBuf,
    workspace: PathBuf,
}

fn env() -> Env {
    let tmp = lathe_mock::fixture::outside_tempdir(env!("CARGO_TARGET_TMPDIR"));
    let base = tmp.path().canonicalize().expect("canonical");
    let (home, user_home, workspace) = (base.join("lathe-home"), base.join("user"), base.join("ws"));
    for dir in [&home, &user_home, &workspace] {
        std::fs::create_dir_all(dir).expect("dir");
    }
    std::fs::write(home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    Env { _tmp: tmp, home, user_home, workspace }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    std::fs::write(path, text).expect("write");
}

fn lathe(env: &Env, server: &MockServer, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(args)
        .args([
            "--provider",
            "anthropic",
            "--base-url",
            &server.url(),
            "--output-format",
            "stream-json",
            "-C",
        ])
        .arg(&env.workspace)
        .env("LATHE_HOME", &env.home)
        .env("HOME", &env.user_home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .env_remove("LATHE_PERMISSION_MODE")
        .stdin(Stdio::null());
    command
}

async fn output(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output()).await.expect("join").expect("run lathe")
}

async fn scripted(turns: Value) -> MockServer {
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

/// The `tool_result` line of call `id` (a sub-agent's lines included).
fn result<'a>(lines: &'a [Value], id: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["type"] == "tool_result" && l["id"] == id)
        .unwrap_or_else(|| panic!("no tool_result for {id}: {lines:?}"))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const MODES: [&[&str]; 3] =
    [&["--yolo"], &["--permission-mode", "accept-edits"], &["--permission-mode", "default"]];

#[tokio::test]
async fn an_agents_scoped_shell_runs_only_what_its_scope_names_in_every_mode() {
    for mode in MODES {
        let env = env();
        write(
            &env.workspace.join(".claude/agents/reviewer.md"),
            "---\nname: reviewer\ndescription: Reviews a change\ntools: Read, Grep, Bash(git diff *)\n---\nReview.\n",
        );
        let server = scripted(json!([
            {"tool_calls": [{"id": "t1", "name": "task",
                             "arguments": {"description": "review", "prompt": "review", "subagent_type": "reviewer"}}]},
            {"tool_calls": [shell("s1", "touch PWNED"), shell("s2", "git diff --stat && touch PWNED2"),
                            shell("s3", "git diff --no-index /dev/null /dev/null")]},
            {"text": "Reviewed."},
            {"text": "Done."}
        ]))
        .await;
        let out = output(lathe(&env, &server, &[&["-p", "review"], mode].concat())).await;
        assert_eq!(out.status.code(), Some(0), "{mode:?}: {}", stderr(&out));
        let lines = lines(&out);
        for id in ["s1", "s2"] {
            let refused = result(&lines, id);
            assert_eq!(refused["status"], "denied", "{mode:?} {id}: {refused}");
            let text = refused["output"].as_str().unwrap_or_default();
            assert!(
                text.contains("`Bash(git diff *)`") && text.contains("reviewer.md"),
                "{mode:?} {id}: {text}"
            );
        }
        assert!(!env.workspace.join("PWNED").exists() && !env.workspace.join("PWNED2").exists(), "{mode:?}");
        // `git diff` itself is read-only: it runs in every mode.
        assert_eq!(result(&lines, "s3")["status"], "completed", "{mode:?}: {}", result(&lines, "s3"));
    }
}

#[tokio::test]
async fn a_skills_scoped_allowed_tools_bind_until_the_turn_ends() {
    let env = env();
    write(
        &env.workspace.join(".claude/skills/inspect/SKILL.md"),
        "---\nname: inspect\ndescription: Inspect the repository\nallowed-tools: Read, Bash(git status:*)\n---\nInspect.\n",
    );
    let server = scripted(json!([
        {"tool_calls": [{"id": "k1", "name": "skill", "arguments": {"name": "inspect"}}]},
        {"tool_calls": [shell("s1", "touch PWNED"), shell("s2", "git status --short")]},
        {"text": "Inspected."}
    ]))
    .await;
    let out = output(lathe(&env, &server, &["-p", "inspect", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    let refused = result(&lines, "s1");
    assert_eq!(refused["status"], "denied", "{refused}");
    let text = refused["output"].as_str().unwrap_or_default();
    assert!(text.contains("`Bash(git status:*)`") && text.contains("skill `inspect`"), "{text}");
    assert!(!env.workspace.join("PWNED").exists());
    assert_eq!(result(&lines, "s2")["status"], "completed", "{}", result(&lines, "s2"));
}

#[tokio::test]
async fn a_commands_scoped_allowed_tools_bind_its_bang_commands_and_its_turn() {
    let env = env();
    write(
        &env.workspace.join(".lathe/commands/audit.md"),
        "---\ndescription: Audit\nallowed-tools: Read, Bash(echo *)\n---\nA: !`echo scoped-ok` B: !`touch bang.txt`\n",
    );
    let server = scripted(json!([
        {"tool_calls": [shell("s1", "touch PWNED")]},
        {"text": "Audited."}
    ]))
    .await;
    let out = output(lathe(&env, &server, &["-p", "/audit", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let prompt = server.requests()[0].body["messages"][0]["content"].to_string();
    assert!(prompt.contains("A: scoped-ok") && prompt.contains("B: [!`touch bang.txt` not run:"), "{prompt}");
    assert!(prompt.contains("`Bash(echo *)`"), "{prompt}");
    assert!(!env.workspace.join("bang.txt").exists());
    let lines = lines(&out);
    assert_eq!(result(&lines, "s1")["status"], "denied", "{}", result(&lines, "s1"));
    assert!(!env.workspace.join("PWNED").exists());
}

/// The project of K14: `config/prod.key` holds a secret, the project allows `Read(**)`, and the user
/// settings at `settings` deny `Read(config/prod.key)` (before or after an allow of their own).
async fn user_deny_binds(env: &Env, settings: &Path, deny_first: bool, extra_env: &[(&str, &Path)]) {
    write(&env.workspace.join("config/prod.key"), "SECRET=hunter2\n");
    write(&env.workspace.join("src/app.py"), "SECRET = load()\n");
    write(&env.workspace.join(".claude/settings.json"), r#"{"permissions": {"allow": ["Read(**)"]}}"#);
    let rules = if deny_first {
        r#"{"permissions": {"deny": ["Read(config/prod.key)"], "allow": ["Read(**)"]}}"#
    } else {
        r#"{"permissions": {"allow": ["Read(**)"], "deny": ["Read(config/prod.key)"]}}"#
    };
    write(settings, rules);
    let server = scripted(json!([
        {"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "config/prod.key"}},
                        {"id": "g1", "name": "grep", "arguments": {"pattern": "SECRET"}},
                        {"id": "l1", "name": "glob", "arguments": {"pattern": "**/*.key"}},
                        shell("c1", "cat config/prod.key"), shell("c2", "cat config/*"),
                        shell("c3", "cat < config/prod.key"), shell("c4", "cat {config,x}/prod.key")]},
        {"text": "Read."}
    ]))
    .await;
    let mut command = lathe(env, &server, &["-p", "read the key"]);
    for (name, value) in extra_env {
        command.env(name, value);
    }
    let out = output(command).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    let read = result(&lines, "r1");
    assert_eq!(read["status"], "denied", "{read}");
    let text = read["output"].as_str().unwrap_or_default();
    assert!(
        text.contains(&settings.display().to_string()) && text.contains("Read(config/prod.key)"),
        "{text}"
    );
    let grep = result(&lines, "g1")["output"].as_str().unwrap_or_default().to_string();
    assert!(
        grep.contains("src/app.py") && !grep.contains("prod.key:") && !grep.contains("hunter2"),
        "{grep}"
    );
    assert!(grep.contains("1 entry not shown: denied by the deny rule `Read(config/prod.key)`"), "{grep}");
    let glob = result(&lines, "l1")["output"].as_str().unwrap_or_default().to_string();
    assert!(!glob.contains("config/prod.key\n"), "{glob}");
    for id in ["c1", "c2", "c3", "c4"] {
        let cat = result(&lines, id);
        assert_eq!(cat["status"], "denied", "{id}: {cat}");
    }
    let sent = serde_json::to_string(&server.requests().last().expect("request").body).expect("json");
    assert!(!sent.contains("hunter2"), "the secret reached the provider");
}

#[tokio::test]
async fn a_user_deny_rule_with_a_relative_path_binds_in_the_working_directory() {
    for deny_first in [true, false] {
        let env = env();
        let settings = env.user_home.join(".claude/settings.json");
        user_deny_binds(&env, &settings, deny_first, &[]).await;
    }
}

#[tokio::test]
async fn with_claude_config_dir_set_its_deny_rules_bind() {
    let env = env();
    let dir = env.user_home.join("claude-config");
    user_deny_binds(&env, &dir.join("settings.json"), true, &[("CLAUDE_CONFIG_DIR", &dir)]).await;
}

#[tokio::test]
async fn a_tool_outside_a_skills_allowed_tools_is_recorded_as_denied_naming_the_skill() {
    let env = env();
    write(
        &env.workspace.join(".claude/skills/inspect/SKILL.md"),
        "---\nname: inspect\ndescription: Inspect the repository\nallowed-tools: Read\n---\nInspect.\n",
    );
    let server = scripted(json!([
        {"tool_calls": [{"id": "k1", "name": "skill", "arguments": {"name": "inspect"}}]},
        {"tool_calls": [{"id": "w1", "name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}]},
        {"text": "Inspected."}
    ]))
    .await;
    let out = output(lathe(&env, &server, &["-p", "inspect", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    let refused = result(&lines, "w1");
    assert_eq!(refused["status"], "denied", "{refused}");
    let text = refused["output"].as_str().unwrap_or_default();
    assert!(text.contains("skill `inspect`"), "{text}");
    let result_line = lines.iter().find(|l| l["type"] == "result").expect("result line");
    let denials = result_line["permission_denials"].to_string();
    assert!(denials.contains("w1") && denials.contains("write_file"), "{denials}");
    assert!(!env.workspace.join("out.txt").exists());
}

#[tokio::test]
async fn a_second_skill_narrows_the_first_ones_allowed_tools_never_widens_them() {
    let env = env();
    write(
        &env.workspace.join(".claude/skills/inspect/SKILL.md"),
        "---\nname: inspect\ndescription: Inspect\nallowed-tools: Read, Bash(git status:*)\n---\nInspect.\n",
    );
    write(
        &env.workspace.join(".claude/skills/wide/SKILL.md"),
        "---\nname: wide\ndescription: Wide\nallowed-tools: Bash\n---\nWide.\n",
    );
    let server = scripted(json!([
        {"tool_calls": [{"id": "k1", "name": "skill", "arguments": {"name": "inspect"}}]},
        {"tool_calls": [{"id": "k2", "name": "skill", "arguments": {"name": "wide"}}]},
        {"tool_calls": [shell("s1", "touch AFTER_WIDE")]},
        {"text": "Done."}
    ]))
    .await;
    let out = output(lathe(&env, &server, &["-p", "inspect", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(result(&lines, "s1")["status"], "denied", "{}", result(&lines, "s1"));
    assert!(!env.workspace.join("AFTER_WIDE").exists());
}

#[tokio::test]
async fn a_program_named_by_a_path_is_not_the_program_a_scope_names() {
    let env = env();
    write(
        &env.workspace.join(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews\ntools: Bash(git diff *)\n---\nReview.\n",
    );
    write(&env.workspace.join("tools/git"), "#!/bin/sh\ntouch FAKE_GIT_RAN\n");
    let mut permissions = std::fs::metadata(env.workspace.join("tools/git")).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(env.workspace.join("tools/git"), permissions).expect("chmod");
    let server = scripted(json!([
        {"tool_calls": [{"id": "t1", "name": "task",
                         "arguments": {"description": "r", "prompt": "r", "subagent_type": "reviewer"}}]},
        {"tool_calls": [shell("s1", "./tools/git diff"), shell("s2", "git diff <<EOF\n$(touch P38)\nEOF")]},
        {"text": "Reviewed."},
        {"text": "Done."}
    ]))
    .await;
    let out = output(lathe(&env, &server, &["-p", "review", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    for id in ["s1", "s2"] {
        assert_eq!(result(&lines, id)["status"], "denied", "{id}: {}", result(&lines, id));
    }
    assert!(!env.workspace.join("FAKE_GIT_RAN").exists() && !env.workspace.join("P38").exists());
}
