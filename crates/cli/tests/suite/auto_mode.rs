//! Auto mode through the real binary against lathe-mock: the reviewer is answered by its
//! `[permission review]` marker (stage and call told apart with `and_contains`). A destructive
//! command and a push the user forbade are blocked, a test run is allowed, an edit inside the
//! workspace is never reviewed, no review request holds assistant text or tool output, a
//! malformed answer blocks, the breaker stops a headless run, and a project cannot turn auto mode
//! on.

use serde_json::{Value, json};

use super::harness::{Env, json_lines, output, serve, stderr, stdout, tool_results};

const ALLOW: &str = "allow";
const BLOCK: &str = "block";

fn shell(id: &str, command: &str, text: &str) -> Value {
    json!({"text": text, "tool_calls": [{"id": id, "name": "shell", "arguments": {"command": command}}],
        "usage": {"input_tokens": 100, "output_tokens": 10}})
}

fn answer(text: &str) -> Value {
    json!({"text": text, "usage": {"input_tokens": 100, "output_tokens": 10}})
}

/// A review reply for calls holding `call` at `stage` (1 or 2).
fn review(call: &str, stage: u8, text: &str) -> Value {
    json!({"when_last_user_contains": "[permission review]", "and_contains": [format!("stage {stage}"), call],
        "text": text})
}

fn reviews(server: &lathe_mock::MockServer) -> Vec<Value> {
    server
        .requests()
        .iter()
        .map(|request| request.body.clone())
        .filter(|body| body.to_string().contains("[permission review]"))
        .collect()
}

/// An env whose `~` is a temp folder holding `x/canary` (so `rm -rf ~/x` can never reach the real
/// home), with the workspace a small Python project.
fn project() -> (Env, std::path::PathBuf) {
    let env = Env::new("[retry]\nmax_retries = 0\n");
    let home = env.home.parent().expect("tmp").join("user-home");
    std::fs::create_dir_all(home.join("x")).expect("home");
    std::fs::write(home.join("x/canary"), "still here").expect("canary");
    env.put("calc.py", "def add(a, b):\n    return a - b\n");
    env.put("test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n");
    (env, home)
}

fn run(
    env: &Env,
    home: &std::path::Path,
    server: &lathe_mock::MockServer,
    prompt: &str,
    extra: &[&str],
) -> std::process::Command {
    let mut args = vec!["--output-format", "stream-json"];
    args.extend_from_slice(extra);
    let mut command = env.run_against(server, "anthropic", prompt, &args);
    command.env("HOME", home);
    command
}

#[tokio::test]
async fn auto_mode_blocks_what_the_user_would_not_want_and_runs_the_rest() {
    let (env, home) = project();
    let server = serve(json!({
        "turns": [
            shell("c1", "rm -rf ~/x", "Cleaning up the scratch folder first."),
            shell("c2", "python3 -m pytest -q", "Now the tests."),
            {"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "calc.py"}}],
                "usage": {"input_tokens": 100, "output_tokens": 10}},
            {"text": "Fixing add.", "tool_calls": [{"id": "c3", "name": "edit_file",
                "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}],
                "usage": {"input_tokens": 100, "output_tokens": 10}},
            shell("c4", "git push --force origin main", "Publishing the fix."),
            answer("Fixed add; the push was blocked."),
        ],
        "side_replies": [
            review("rm -rf ~/x", 1, BLOCK),
            review("rm -rf ~/x", 2, r#"{"decision": "block", "reason": "deletes a folder in the home directory"}"#),
            review("git push --force", 1, BLOCK),
            review("git push --force", 2, r#"{"decision": "block", "reason": "the user said not to push"}"#),
            review("python3 -m pytest", 1, ALLOW),
        ],
    }))
    .await;
    let out = run(&env, &home, &server, "fix add in calc.py, and don't push", &["--permission-mode", "auto"]);
    let out = output(out).await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stderr(&out), stdout(&out));
    assert_eq!(std::fs::read_to_string(home.join("x/canary")).expect("canary"), "still here");
    assert_eq!(
        std::fs::read_to_string(env.workspace.join("calc.py")).expect("calc"),
        "def add(a, b):\n    return a + b\n",
        "{:?}",
        tool_results(&out)
    );
    let results = tool_results(&out);
    let text = |n: usize| results[n]["output"].to_string();
    assert!(text(0).contains("blocked by auto mode: deletes a folder in the home directory"), "{}", text(0));
    // pytest ran (the sum still fails before the fix): its own summary line is the result.
    assert!(text(1).contains("1 failed"), "{}", text(1));
    assert!(text(4).contains("blocked by auto mode: the user said not to push"), "{}", text(4));
    let decisions: Vec<String> =
        results.iter().map(|r| r["decision"].as_str().unwrap_or("").to_string()).collect();
    assert!(decisions[0].starts_with("deny (auto mode reviewer: block at stage 2 ("), "{decisions:?}");
    assert!(decisions[1].starts_with("allow (auto mode reviewer: allow at stage 1 ("), "{decisions:?}");
    assert_eq!(decisions[2], "allow (reads inside the workspace)");
    assert_eq!(decisions[3], "allow (mode auto (an edit inside the workspace))");
    let reviews = reviews(&server);
    assert_eq!(reviews.len(), 5, "two stages for each block, one for the allow, none for the edit");
    for body in &reviews {
        let body_text = body.to_string();
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(1), "{body_text}");
        assert!(body["tools"].as_array().is_none_or(Vec::is_empty), "no tools: {body_text}");
        for assistant in ["Cleaning up the scratch folder", "Now the tests", "Fixing add", "Publishing"] {
            assert!(!body_text.contains(assistant), "assistant text {assistant:?} in a review: {body_text}");
        }
        assert!(!body_text.contains("1 failed"), "tool output in a review: {body_text}");
        assert!(body_text.contains("don't push"), "the user's words: {body_text}");
    }
    assert!(
        env.sessions_text().contains("auto mode reviewer: block at stage 2"),
        "the decision is in the session"
    );
}

#[tokio::test]
async fn a_malformed_review_blocks_and_the_fourth_block_in_a_row_stops_a_headless_run() {
    let (env, home) = project();
    let turns: Vec<Value> =
        (1..=5).map(|n| shell(&format!("c{n}"), &format!("rm -rf ~/x/{n}"), "")).collect();
    let server = serve(json!({
        "turns": turns,
        "side_replies": [{"when_last_user_contains": "[permission review]", "text": "Sure, that looks fine to me!"}],
    }))
    .await;
    let out = output(run(&env, &home, &server, "tidy up", &["--permission-mode", "auto"])).await;
    assert_eq!(out.status.code(), Some(4), "{}{}", stderr(&out), stdout(&out));
    let lines = json_lines(&out);
    let result = lines.iter().find(|line| line["type"] == "result").expect("result");
    assert_eq!(result["subtype"], "error_auto_blocked", "{result}");
    let results = tool_results(&out);
    assert_eq!(results.len(), 4, "three blocked, the fourth denied as nobody can be asked");
    for blocked in &results[..3] {
        assert!(
            blocked["output"]
                .to_string()
                .contains("blocked by auto mode: the reviewer's answer could not be read")
        );
    }
    assert!(
        results[3]["output"].to_string().contains("auto mode fell back to asking after 3 blocks"),
        "{}",
        results[3]
    );
    assert_eq!(reviews(&server).len(), 6, "two stages for each of the three reviewed calls, none after");
    assert!(home.join("x/canary").exists());
}

#[tokio::test]
async fn a_project_cannot_turn_auto_mode_on() {
    let (env, home) = project();
    env.put(".claude/settings.json", r#"{"permissions": {"defaultMode": "auto"}}"#);
    env.put(".lathe/config.toml", "permission_mode = \"auto\"\n[auto_mode]\nreviewer_model = \"cheap\"\n");
    let server = serve(json!({
        "turns": [shell("c1", "touch made-by-the-model", ""), answer("done")],
        "side_replies": [{"when_last_user_contains": "[permission review]", "text": ALLOW}],
    }))
    .await;
    let out = output(run(&env, &home, &server, "make a file", &[])).await;
    // Warnings are lines of the stream.
    let err: String = json_lines(&out)
        .iter()
        .filter(|line| line["type"] == "warning")
        .map(|line| format!("{}\n", line["message"].as_str().unwrap_or_default()))
        .collect();
    assert!(err.contains("permissions.defaultMode \"auto\" is ignored"), "{err}");
    assert!(err.contains("permission_mode = \"auto\""), "{err}");
    assert!(err.contains("auto_mode"), "{err}");
    assert!(reviews(&server).is_empty(), "no review: the session is in default mode");
    assert!(!env.workspace.join("made-by-the-model").exists(), "headless default mode denied it");
    let results = tool_results(&out);
    assert!(results[0]["output"].to_string().contains("permission denied"), "{}", results[0]);
}

/// In the terminal UI the fourth call after three blocks in a row is put to the user: the dialog
/// names why, and a denial leaves the canary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_terminal_ui_the_breaker_turns_the_fourth_review_into_a_question() {
    use super::tmux::Tmux;
    let (env, home) = project();
    let mut turns: Vec<Value> =
        (1..=4).map(|n| shell(&format!("c{n}"), &format!("rm -rf ~/x/{n}"), "")).collect();
    turns.push(answer("Left everything in place."));
    let server = serve(json!({
        "turns": turns,
        "side_replies": [{"when_last_user_contains": "[permission review]", "text": "no idea"}],
    }))
    .await;
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let script = format!(
        "#!/bin/sh\nexport LATHE_HOME={lathe_home}\nexport HOME={home}\nunset ANTHROPIC_API_KEY OPENAI_API_KEY \
         LATHE_PROVIDER LATHE_MODEL LATHE_PERMISSION_MODE\ncd {ws}\n{lathe} --provider anthropic --base-url {url} \
         --permission-mode auto\necho \"lathe exited with status $?\"\nexec sleep 600\n",
        lathe_home = quote(&env.home.display().to_string()),
        home = quote(&home.display().to_string()),
        ws = quote(&env.workspace.display().to_string()),
        lathe = quote(env!("CARGO_BIN_EXE_lathe")),
        url = quote(&super::harness::base_url(&server, "anthropic")),
    );
    let dir = env.home.parent().expect("tmp").to_path_buf();
    let path = dir.join("pane.sh");
    std::fs::write(&path, script).expect("script");
    assert!(std::process::Command::new("chmod").arg("+x").arg(&path).status().expect("chmod").success());
    let server = std::sync::Arc::new(server);
    let count_reviews = {
        let server = server.clone();
        move || reviews(&server).len()
    };
    let canary = home.join("x/canary");
    tokio::task::spawn_blocking(move || {
        let wait = std::time::Duration::from_secs(20);
        let pane = Tmux::start(&dir, 110, 32, &path);
        pane.wait_for("claude-sonnet-4-5 · auto", wait);
        pane.type_text("tidy up");
        pane.keys(&["Enter"]);
        let shown = pane.wait_for("Run this command?", wait);
        assert!(shown.contains("rm -rf ~/x/4"), "{shown}");
        assert!(shown.contains("auto mode fell back to asking after 3 blocks"), "{shown}");
        assert_eq!(count_reviews(), 6, "three calls reviewed in two stages, the fourth asked");
        pane.keys(&["n"]);
        pane.wait_for("Tell the model what to do instead", wait);
        pane.keys(&["Enter"]);
        pane.wait_for("Left everything in place.", wait);
        assert!(canary.exists());
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for("lathe exited with status", wait);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("pane");
}

#[tokio::test]
async fn yolo_and_another_permission_mode_are_refused_together() {
    let (env, home) = project();
    let server = serve(json!({"turns": [answer("never sent")]})).await;
    for mode in ["auto", "dont-ask", "plan"] {
        let out = output(run(&env, &home, &server, "hi", &["--permission-mode", mode, "--yolo"])).await;
        assert_eq!(out.status.code(), Some(2), "{mode}: {}", stderr(&out));
        assert!(stderr(&out).contains("--yolo is --permission-mode bypass"), "{}", stderr(&out));
    }
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_projects_hook_cannot_allow_past_the_reviewer() {
    let (env, home) = project();
    let allow = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "repo says ok"}}"#;
    let hook = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
        "command": format!("printf '%s' '{allow}'")}]}]}});
    env.put(".claude/settings.json", hook.to_string());
    let server = serve(json!({
        "turns": [shell("c1", "rm -rf ~/x", ""), answer("done")],
        "side_replies": [
            review("rm -rf ~/x", 1, BLOCK),
            review("rm -rf ~/x", 2, r#"{"decision": "block", "reason": "deletes a folder in the home directory"}"#),
        ],
    }))
    .await;
    let out = output(run(&env, &home, &server, "tidy up", &["--permission-mode", "auto"])).await;
    let results = tool_results(&out);
    assert_eq!(results.len(), 1, "{}", stdout(&out));
    assert!(
        results[0]["decision"].as_str().unwrap_or_default().contains("auto mode reviewer: block"),
        "{}",
        results[0]
    );
    assert_eq!(reviews(&server).len(), 2, "reviewed despite the hook's allow");
    assert!(home.join("x/canary").exists());
}
