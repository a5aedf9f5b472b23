#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use super::explain_exit_1;
use crate::ToolError;
use crate::test_support::Workspace;
use pretty_assertions::assert_eq;
use serde_json::json;

/// Liveness guard: a hung command fails the test instead of hanging it.
async fn shell(ws: &Workspace, args: serde_json::Value) -> Result<crate::ToolOutput, ToolError> {
    tokio::time::timeout(Duration::from_secs(20), ws.call("shell", args)).await.expect("shell call returned")
}

#[tokio::test]
async fn commands_reading_stdin_finish_immediately() {
    let ws = Workspace::new();
    let out = shell(&ws, json!({"command": "cat", "timeout_ms": 10_000})).await.unwrap();
    assert_eq!(out.text_content(), "(no output)\nexit code: 0");
    let out = shell(&ws, json!({"command": "read x; echo \"got:[$x] status:$?\"", "timeout_ms": 10_000}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "got:[] status:1\nexit code: 0");
}

#[tokio::test]
async fn commands_run_in_a_session_of_their_own_without_a_terminal() {
    let ws = Workspace::new();
    // Field 6 of /proc/PID/stat is the session id; a session leader's is its own pid.
    let out = shell(
        &ws,
        json!({"command": "read -r _ _ _ _ _ sid _ < /proc/$$/stat; [ \"$sid\" = \"$$\" ] && echo leader; \
                           (exec 3</dev/tty) 2>/dev/null || echo no-tty"}),
    )
    .await
    .unwrap();
    assert_eq!(out.text_content(), "leader\nno-tty\nexit code: 0");
}

#[tokio::test]
async fn the_environment_rules_out_prompts_pagers_and_colour() {
    let ws = Workspace::new();
    let out = shell(
        &ws,
        json!({"command": "echo \"$GIT_TERMINAL_PROMPT|$GIT_PAGER|$PAGER|$NO_COLOR|${GIT_ASKPASS-unset}|${SSH_ASKPASS-unset}\""}),
    )
    .await
    .unwrap();
    assert_eq!(out.text_content(), "0|cat|cat|1||\nexit code: 0");
}

#[tokio::test]
async fn stdout_and_stderr_are_interleaved_in_order() {
    let ws = Workspace::new();
    let out =
        shell(&ws, json!({"command": "echo out1; echo err1 >&2; echo out2; echo err2 >&2"})).await.unwrap();
    assert_eq!(out.text_content(), "out1\nerr1\nout2\nerr2\nexit code: 0");
    assert_eq!(out.exit_code, Some(0));
    assert!(!out.is_error);
}

#[tokio::test]
async fn a_non_zero_exit_is_an_error_output_with_its_code() {
    let ws = Workspace::new();
    let out = shell(&ws, json!({"command": "echo failing; exit 3"})).await.unwrap();
    assert_eq!(out.text_content(), "failing\nexit code: 3");
    assert_eq!(out.exit_code, Some(3));
    assert!(out.is_error);
}

#[tokio::test]
async fn exit_1_of_grep_diff_and_test_is_explained() {
    let ws = Workspace::new();
    ws.put("a.txt", b"alpha\n");
    ws.put("b.txt", b"beta\n");
    let out = shell(&ws, json!({"command": "grep nothing-here a.txt"})).await.unwrap();
    assert_eq!(out.text_content(), "(no output)\nexit code: 1 (exit 1: no match)");
    let out = shell(&ws, json!({"command": "diff -q a.txt b.txt"})).await.unwrap();
    assert!(out.text_content().ends_with("exit code: 1 (exit 1: files differ)"), "{}", out.text_content());
    let out = shell(&ws, json!({"command": "[ -f missing ]"})).await.unwrap();
    assert_eq!(out.text_content(), "(no output)\nexit code: 1 (exit 1: condition false)");
    assert_eq!(out.exit_code, Some(1));
}

#[test]
fn exit_1_explanations_look_at_the_last_command() {
    let cases = [
        ("grep -r foo src", Some("exit 1: no match")),
        ("cd src && rg foo", Some("exit 1: no match")),
        ("LC_ALL=C /usr/bin/grep x f", Some("exit 1: no match")),
        ("diff a b", Some("exit 1: files differ")),
        ("test -d build", Some("exit 1: condition false")),
        ("grep foo f | wc -l", None),
        ("grep foo f 2>&1", Some("exit 1: no match")),
        ("grep 'a|b' f", Some("exit 1: no match")),
        ("grep \"x;y\" f &> out", Some("exit 1: no match")),
        ("make & wait; diff -u a b", Some("exit 1: files differ")),
        ("test -f x && echo yes", None),
        ("cargo test", None),
        ("python -c 'import sys; sys.exit(1)'", None),
    ];
    for (command, expected) in cases {
        assert_eq!(explain_exit_1(command), expected, "{command}");
    }
}

#[tokio::test]
async fn ten_megabytes_of_output_keep_head_tail_exit_code_and_spill_path() {
    let ws = Workspace::new();
    let out = shell(&ws, json!({"command": "seq 1 1300000; echo done >&2; exit 4"})).await.unwrap();
    let text = out.text_content();
    assert!(text.chars().count() <= 30_000, "{} chars in context", text.chars().count());
    assert!(text.starts_with("1\n2\n3\n"), "{}", &text[..50]);
    assert!(text.ends_with("1299999\n1300000\ndone\nexit code: 4"), "{}", &text[text.len() - 80..]);
    let spill = out.spill_path.clone().expect("spilled");
    assert!(text.contains(&spill.display().to_string()));
    assert!(spill.starts_with(ws.spill.path()));
    let expected: String = (1..=1_300_000).map(|i| format!("{i}\n")).collect::<String>() + "done\n";
    assert!(expected.len() > 9_000_000);
    assert!(std::fs::read_to_string(&spill).unwrap() == expected, "the spill file holds the whole output");
    assert_eq!(out.exit_code, Some(4));
}

#[tokio::test]
async fn ansi_colours_and_carriage_return_progress_bars_are_cleaned() {
    let ws = Workspace::new();
    let command = r"printf '\033[1;31merror\033[0m: bad\n'; printf 'Downloading 10%%\rDownloading 55%%\rDownloading 100%%\n'; printf '\033[32mok\033[0m\tdone\n'";
    let out = shell(&ws, json!({"command": command})).await.unwrap();
    assert_eq!(out.text_content(), "error: bad\nDownloading 100%\nok\tdone\nexit code: 0");
}

fn pid_is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // A zombie is dead; it only waits for its (new) parent to reap it.
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn cancel_kills_the_process_group_within_a_second() {
    let ws = Workspace::new();
    let pidfile = ws.path("pidfile");
    let cancel = ws.ctx.cancel.clone();
    let watcher = tokio::spawn({
        let pidfile = pidfile.clone();
        async move {
            for _ in 0..500 {
                let pid = std::fs::read_to_string(&pidfile).ok();
                if let Some(pid) = pid.and_then(|p| p.trim().parse::<i32>().ok()) {
                    let cancelled_at = Instant::now();
                    cancel.cancel();
                    return (pid, cancelled_at);
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            panic!("the command never wrote its pid file");
        }
    });
    let result = shell(&ws, json!({"command": "bash -c 'sleep 30 & echo $! > pidfile; wait'"})).await;
    let returned_at = Instant::now();
    let (grandchild, cancelled_at) = watcher.await.unwrap();
    assert!(matches!(result, Err(ToolError::Cancelled)), "{result:?}");
    let latency = returned_at - cancelled_at;
    assert!(latency < Duration::from_secs(1), "cancel took {latency:?}");
    let deadline = Instant::now() + Duration::from_secs(2);
    while !pid_is_gone(grandchild) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(pid_is_gone(grandchild), "grandchild {grandchild} still alive");
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_says_so() {
    let ws = Workspace::new();
    let started = Instant::now();
    let result = shell(&ws, json!({"command": "echo started; sleep 30; touch finished", "timeout_ms": 300}))
        .await
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.exit_code, Some(124));
    let text = result.text_content();
    assert!(text.starts_with("started\n"), "the output so far is kept: {text}");
    assert!(text.contains("timed out after 300 ms"), "{text}");
    assert!(text.contains("with run_in_background: true and read it with shell_output"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!ws.path("finished").exists());
}

#[tokio::test]
async fn background_jobs_holding_the_output_open_do_not_hang_the_call() {
    let ws = Workspace::new();
    let started = Instant::now();
    let out = shell(&ws, json!({"command": "sleep 10 & echo started"})).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    let text = out.text_content();
    assert!(
        text.starts_with("started\n") && text.contains("left running") && text.ends_with("exit code: 0"),
        "{text}"
    );
}

#[tokio::test]
async fn a_background_job_is_stopped_when_the_call_ends_and_its_pid_named() {
    let ws = Workspace::new();
    let out = shell(&ws, json!({"command": "sleep 30 >/dev/null 2>&1 & echo $! > bg.pid; echo started"}))
        .await
        .unwrap();
    let text = out.text_content();
    let pid = std::fs::read_to_string(ws.path("bg.pid")).unwrap().trim().to_string();
    assert!(text.contains(&format!("and stopped: pid {pid};")), "{text}");
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
    };
    for _ in 0..250 {
        if !alive() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "the background sleep {pid} outlived its call");
}

#[tokio::test]
async fn runs_in_the_workspace_or_the_given_workdir_with_the_context_environment() {
    let mut ws = Workspace::new();
    ws.put("sub/marker", b"");
    ws.ctx.env.push(("LATHE_TEST_VALUE".into(), "from-context".into()));
    let out = shell(&ws, json!({"command": "pwd; echo $LATHE_TEST_VALUE"})).await.unwrap();
    assert_eq!(out.text_content(), format!("{}\nfrom-context\nexit code: 0", ws.ctx.workspace.display()));
    let out = shell(&ws, json!({"command": "ls", "workdir": "sub"})).await.unwrap();
    assert_eq!(out.text_content(), "marker\nexit code: 0");
    let err = shell(&ws, json!({"command": "ls", "workdir": "nope"})).await.unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[tokio::test]
async fn dropping_a_running_call_kills_its_process_group() {
    let ws = std::sync::Arc::new(Workspace::new());
    let pidfile = ws.path("pidfile");
    let task = tokio::spawn({
        let ws = ws.clone();
        async move { ws.call("shell", json!({"command": "bash -c 'sleep 30 & echo $! > pidfile; wait'"})).await }
    });
    let mut grandchild = None;
    for _ in 0..500 {
        let pid = std::fs::read_to_string(&pidfile).ok();
        grandchild = pid.and_then(|p| p.trim().parse::<i32>().ok());
        if grandchild.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let grandchild = grandchild.expect("the command wrote its pid file");
    task.abort();
    let _ = task.await;
    let deadline = Instant::now() + Duration::from_secs(2);
    while !pid_is_gone(grandchild) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(pid_is_gone(grandchild), "grandchild {grandchild} still alive");
}
