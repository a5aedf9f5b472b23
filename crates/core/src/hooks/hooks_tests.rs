#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::*;

/// Hooks from one settings value, in a fresh project directory.
fn hooks(dir: &Path, settings: Value) -> Hooks {
    let mut table = HookTable::default();
    let mut warnings = Vec::new();
    table.add_settings(&settings, "test", &mut warnings);
    assert_eq!(warnings, Vec::<String>::new());
    let session = HookSession {
        session_id: "s-1".into(),
        transcript_path: dir.join("s-1.jsonl"),
        cwd: dir.to_path_buf(),
        permission_mode: lathe_policy::PermissionMode::Bypass,
        policy: None,
    };
    Hooks::new(table, session)
}

fn one(event: &str, matcher: &str, command: &str) -> Value {
    json!({"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}})
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("hook input")).expect("json")
}

#[tokio::test]
async fn pre_tool_use_gets_claude_names_on_stdin_and_exit_2_blocks_with_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let hooks =
        hooks(dir.path(), one("PreToolUse", "Bash", "cat > input.json; echo 'no rm here' >&2; exit 2"));
    let cancel = CancellationToken::new();
    let verdict = hooks.pre_tool_use("c1", "shell", &json!({"command": "rm -rf x"}), &cancel).await;
    assert_eq!(verdict.block.as_deref(), Some("no rm here"));
    let input = read_json(&dir.path().join("input.json"));
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"], json!({"command": "rm -rf x"}));
    assert_eq!(input["session_id"], "s-1");
    assert_eq!(input["cwd"], dir.path().display().to_string());
    assert_eq!(input["transcript_path"], dir.path().join("s-1.jsonl").display().to_string());
    assert_eq!(input["tool_use_id"], "c1");

    // Not matched: a read.
    let read = hooks.pre_tool_use("c2", "read_file", &json!({"path": "a"}), &cancel).await;
    assert_eq!(read, HookVerdict::default());
}

#[tokio::test]
async fn matchers_accept_claude_and_lathe_names_and_regexes() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let cases = [
        ("Write|Edit", "write_file", true),
        ("Write|Edit", "shell", false),
        ("shell", "shell", true),
        ("Bash", "shell", true),
        ("", "grep", true),
        ("*", "mcp__fs__read", true),
        ("mcp__fs__.*", "mcp__fs__read", true),
        ("mcp__fs__.*", "mcp__db__query", false),
        ("Edit", "edit_file", true),
        ("Ed", "edit_file", false),
    ];
    for (matcher, tool, expected) in cases {
        let hooks = hooks(dir.path(), one("PreToolUse", matcher, "exit 2"));
        let verdict = hooks.pre_tool_use("c", tool, &json!({}), &cancel).await;
        assert_eq!(verdict.block.is_some(), expected, "{matcher} vs {tool}");
    }
}

#[tokio::test]
async fn json_output_decides_permission_and_adds_context() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let echo = |json: Value| format!("echo '{json}'");
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                             "permissionDecisionReason": "protected file"}});
    let verdict = hooks(dir.path(), one("PreToolUse", "", &echo(deny)))
        .pre_tool_use("c", "write_file", &json!({}), &cancel)
        .await;
    assert_eq!(verdict.block.as_deref(), Some("protected file"));

    let allow =
        json!({"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "safe"}});
    let verdict = hooks(dir.path(), one("PreToolUse", "", &echo(allow)))
        .pre_tool_use("c", "shell", &json!({}), &cancel)
        .await;
    assert_eq!(verdict.permission, Some(PermissionVerdict::Allow("safe".into())));
    assert_eq!(verdict.block, None);

    let ask = json!({"hookSpecificOutput": {"permissionDecision": "ask"}, "systemMessage": "careful"});
    let verdict = hooks(dir.path(), one("PreToolUse", "", &echo(ask)))
        .pre_tool_use("c", "shell", &json!({}), &cancel)
        .await;
    assert!(matches!(verdict.permission, Some(PermissionVerdict::Ask(_))));
    assert_eq!(verdict.messages, vec!["careful".to_string()]);

    let stop = json!({"continue": false, "stopReason": "enough for today"});
    let result = lathe_protocol::ToolResult::text("c", "a\nb", false, lathe_protocol::ToolStatus::Completed);
    let verdict = hooks(dir.path(), one("PostToolUse", "", &echo(stop)))
        .post_tool_use("shell", &json!({"command": "ls"}), &result, Some(0), &cancel)
        .await;
    assert_eq!(verdict.stop.as_deref(), Some("enough for today"));

    let context = json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "today is Tuesday"}});
    let verdict = hooks(dir.path(), one("UserPromptSubmit", "", &echo(context)))
        .user_prompt_submit("hi", &cancel)
        .await;
    assert_eq!(verdict.context, vec!["today is Tuesday".to_string()]);

    let block = json!({"decision": "block", "reason": "tests are failing"});
    let verdict =
        hooks(dir.path(), one("Stop", "", &echo(block))).stop(HookEvent::Stop, false, &cancel).await;
    assert_eq!(verdict.block.as_deref(), Some("tests are failing"));
}

#[tokio::test]
async fn plain_stdout_is_context_only_for_prompt_and_session_start() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let prompt = hooks(dir.path(), one("UserPromptSubmit", "", "echo 'branch: main'"));
    assert_eq!(prompt.user_prompt_submit("hi", &cancel).await.context, vec!["branch: main".to_string()]);
    let start = hooks(dir.path(), one("SessionStart", "startup", "echo 'welcome'"));
    assert_eq!(start.session_start("startup").await.context, vec!["welcome".to_string()]);
    assert_eq!(start.session_start("resume").await.context, Vec::<String>::new());
    let post = hooks(dir.path(), one("Notification", "", "echo 'ignored'; exit 0"));
    assert_eq!(post.notification("needs permission").await, HookVerdict::default());
}

#[tokio::test]
async fn every_event_sends_its_own_fields() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let settings = json!({"hooks": Value::Object(HookEvent::ALL.iter().map(|event| {
        (event.name().to_string(), json!([{"hooks": [{"command": format!("cat > {}.json", event.name())}]}]))
    }).collect())});
    let hooks = hooks(dir.path(), settings);
    let result = lathe_protocol::ToolResult::text("c9", "done", false, lathe_protocol::ToolStatus::Completed);
    hooks
        .pre_tool_use(
            "c9",
            "edit_file",
            &json!({"path": "a.rs", "old_string": "x", "new_string": "y"}),
            &cancel,
        )
        .await;
    hooks
        .post_tool_use("write_file", &json!({"path": "b.txt", "content": "z"}), &result, None, &cancel)
        .await;
    hooks.user_prompt_submit("fix it", &cancel).await;
    hooks.stop(HookEvent::Stop, true, &cancel).await;
    hooks.stop(HookEvent::SubagentStop, false, &cancel).await;
    hooks.session_start("resume").await;
    hooks.session_end("other").await;
    hooks.pre_compact("auto", "").await;
    hooks.notification("Lathe needs your permission to use shell").await;
    let get = |event: &str, field: &str| read_json(&dir.path().join(format!("{event}.json")))[field].clone();
    assert_eq!(get("PreToolUse", "tool_name"), "Edit");
    assert_eq!(get("PreToolUse", "tool_input")["file_path"], dir.path().join("a.rs").display().to_string());
    assert_eq!(get("PostToolUse", "tool_name"), "Write");
    assert_eq!(get("PostToolUse", "tool_response")["success"], true);
    assert_eq!(get("UserPromptSubmit", "prompt"), "fix it");
    assert_eq!(get("Stop", "stop_hook_active"), true);
    assert_eq!(get("SubagentStop", "stop_hook_active"), false);
    assert_eq!(get("SessionStart", "source"), "resume");
    assert_eq!(get("SessionEnd", "reason"), "other");
    assert_eq!(get("PreCompact", "trigger"), "auto");
    assert_eq!(get("Notification", "message"), "Lathe needs your permission to use shell");
    for event in HookEvent::ALL {
        assert_eq!(get(event.name(), "hook_event_name"), event.name());
        assert_eq!(get(event.name(), "permission_mode"), "bypassPermissions");
    }
}

#[tokio::test]
async fn hooks_run_in_the_project_with_its_directory_in_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = hooks(
        dir.path(),
        one("UserPromptSubmit", "", "echo \"$PWD|$CLAUDE_PROJECT_DIR|$LATHE_PROJECT_DIR\""),
    );
    let context = hooks.user_prompt_submit("hi", &CancellationToken::new()).await.context;
    let project = dir.path().canonicalize().unwrap().display().to_string();
    assert_eq!(context, vec![format!("{project}|{}|{}", dir.path().display(), dir.path().display())]);
}

#[tokio::test]
async fn failures_are_messages_for_the_user_and_block_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let cases = [
        ("no-such-hook-command --flag", "failed with exit code 127"),
        ("echo '{\"decision\": '", "printed invalid JSON"),
        ("echo oops >&2; exit 1", "failed with exit code 1: oops"),
    ];
    for (command, expected) in cases {
        let verdict = hooks(dir.path(), one("PreToolUse", "", command))
            .pre_tool_use("c", "shell", &json!({}), &cancel)
            .await;
        assert_eq!(verdict.block, None, "{command}");
        assert_eq!(verdict.messages.len(), 1, "{command}: {:?}", verdict.messages);
        assert!(verdict.messages[0].contains(expected), "{command}: {:?}", verdict.messages);
    }
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let settings = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"command": "sleep 30 & echo $! > child.pid; wait", "timeout": 0.5}]}]}});
    let hooks = hooks(dir.path(), settings);
    let started = Instant::now();
    let verdict = hooks.pre_tool_use("c", "shell", &json!({}), &CancellationToken::new()).await;
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert_eq!(verdict.block, None);
    assert!(verdict.messages[0].contains("timed out after 0.5 s and was killed"), "{:?}", verdict.messages);
    let pid = std::fs::read_to_string(dir.path().join("child.pid")).unwrap().trim().to_string();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z") {
            break;
        }
        assert!(Instant::now() < deadline, "the hook's child {pid} survived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn bad_settings_are_warnings_and_good_hooks_still_load() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.json");
    let mixed = dir.path().join("mixed.json");
    std::fs::write(&broken, "{ not json").unwrap();
    std::fs::write(
        &mixed,
        json!({"permissions": {"allow": ["Bash(ls)"]}, "hooks": {
            "PreToolUse": [{"matcher": "(", "hooks": [{"command": "true"}]},
                           {"matcher": "Bash", "hooks": [{"command": "true"}]}],
            "OnFullMoon": [{"hooks": [{"command": "true"}]}],
            "Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let (table, warnings) = HookTable::load(&[broken, mixed, dir.path().join("missing.json")]);
    let all = warnings.join("\n");
    assert_eq!(warnings.len(), 4, "{all}");
    assert!(all.contains("broken.json: not valid JSON"), "{all}");
    assert!(all.contains("not a valid regex"), "{all}");
    assert!(all.contains("unknown hook event \"OnFullMoon\""), "{all}");
    assert!(all.contains("hook type \"prompt\" is not supported"), "{all}");
    assert_eq!(table.matching(HookEvent::PreToolUse, Some(&["Bash"])).len(), 1);
    assert!(table.is_empty(HookEvent::Stop));
}

#[test]
fn settings_files_are_claude_and_lathe_user_then_project() {
    let files = settings_files(Path::new("/h/.claude"), Path::new("/h/.lathe"), Path::new("/p"));
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "/h/.claude/settings.json",
            "/h/.lathe/settings.json",
            "/p/.claude/settings.json",
            "/p/.claude/settings.local.json",
            "/p/.lathe/settings.json",
            "/p/.lathe/settings.local.json"
        ]
    );
}
