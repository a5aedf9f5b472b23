//! Nothing a command started outlives it unannounced: a `shell` call's background job and a hook's
//! are stopped when they end, through the real binary against `lathe-mock`.

use std::time::{Duration, Instant};

use serde_json::json;

use super::support::*;

/// Waits up to 5 s for `pid` to be gone (its group was signalled; init reaps it soon after).
fn gone_soon(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if process_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    process_gone(pid)
}

fn read_pid(path: &std::path::Path) -> String {
    let pid = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    pid.trim().to_string()
}

#[tokio::test]
async fn a_background_job_of_a_shell_call_is_stopped_when_the_call_ends_and_the_result_names_it() {
    let env = env();
    let server = scripted(json!([
        call("c1", "shell", json!({"command": "sleep 30 >/dev/null 2>&1 & echo $! > bg.pid; echo started"})),
        call("c2", "shell", json!({"command": "cat bg.pid"})),
        {"text": "done"}
    ]))
    .await;
    let out = output(lathe(&env, &server.url(), &["-p", "start it", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pid = read_pid(&env.workspace.join("bg.pid"));
    let seen = tool_result_text(&server.requests()[1].body);
    assert!(
        seen.contains(&format!("left running when the command ended, and stopped: pid {pid};")),
        "{seen}"
    );
    assert!(gone_soon(&pid), "the background sleep {pid} outlived its call");
}

#[tokio::test]
async fn a_hooks_background_job_is_stopped_when_the_hook_exits() {
    let env = env();
    let pid_file = env.root.join("hook.pid");
    let hook = format!("(sleep 30 & echo $! > '{}'); exit 0", pid_file.display());
    env.write_json(
        "ws/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}]}}),
    );
    let server =
        scripted(json!([call("c1", "shell", json!({"command": "echo ran"})), {"text": "done"}])).await;
    let started = Instant::now();
    let out = output(lathe(&env, &server.url(), &["-p", "run it", "--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(20), "the hook's sleep held the run");
    let pid = read_pid(&pid_file);
    assert!(gone_soon(&pid), "the hook's background sleep {pid} outlived the hook");
    let seen = tool_result_text(&server.requests()[1].body);
    assert!(seen.contains("ran"), "the call ran after the hook: {seen}");
}

#[tokio::test]
async fn a_job_that_detached_from_its_group_does_not_outlive_lathe() {
    // `setsid` and a double fork leave the call's process group, so ending the group misses them;
    // Lathe adopts such orphans and ends them at exit — unconfined (--yolo) and in the sandbox
    // (whose pid namespace ends them with the call). Each would write a file a second later.
    for flags in [&["--yolo"][..], &["--permission-mode", "accept-edits"][..]] {
        let env = env();
        let late = |name: &str| env.root.join(name);
        let hook = format!(
            "(setsid sh -c 'sleep 1; touch {}' >/dev/null 2>&1 < /dev/null &); exit 0",
            late("hook-late").display()
        );
        env.write_json(
            "ws/.claude/settings.json",
            &json!({
                "permissions": {"allow": ["Bash(bash detach.sh)"]},
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}]}
            }),
        );
        std::fs::write(
            env.workspace.join("detach.sh"),
            "setsid sh -c 'sleep 1; touch setsid-late' >/dev/null 2>&1 < /dev/null &\n\
             (nohup sh -c 'sleep 1; touch nohup-late' >/dev/null 2>&1 < /dev/null &) &\n\
             sleep 0.2; echo detached\n",
        )
        .expect("script");
        let server =
            scripted(json!([call("c1", "shell", json!({"command": "bash detach.sh"})), {"text": "done"}]))
                .await;
        let mut args = vec!["-p", "detach"];
        args.extend_from_slice(flags);
        let out = output(lathe(&env, &server.url(), &args)).await;
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {}", stderr(&out));
        let seen = tool_result_text(&server.requests()[1].body);
        assert!(seen.contains("detached"), "{flags:?}: {seen}");
        std::thread::sleep(Duration::from_millis(2_000));
        for file in [env.workspace.join("setsid-late"), env.workspace.join("nohup-late"), late("hook-late")] {
            assert!(!file.exists(), "{flags:?}: what wrote {} outlived Lathe", file.display());
        }
    }
}
