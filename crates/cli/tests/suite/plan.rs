//! Plan mode as a flow, through the real binary against `lathe-mock`: headless `lathe -p --plan`
//! prints the plan the model presented with `exit_plan_mode` and changes nothing; in the terminal
//! UI `/plan` starts planning, the plan dialog runs the plan with edits accepted, or keeps
//! planning and sends the user's feedback to the model.

use std::sync::Arc;

use serde_json::{Value, json};

use super::support::{self, call, offered_tools, tool_result_text};
use super::tmux::Tmux;
use super::tui::{SETTINGS_END, WAIT, pane_script, scripted, setup};

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
const PLAN: &str = "# Swap the operands\n\n1. In `src/lib.rs`, change `a + b` to `b + a`.\n2. Run the tests.";

fn edit() -> Value {
    call(
        "call_edit",
        "edit_file",
        json!({"path": "src/lib.rs", "old_string": "a + b", "new_string": "b + a"}),
    )
}

fn present() -> Value {
    call("call_plan", "exit_plan_mode", json!({"plan": PLAN}))
}

#[tokio::test]
async fn headless_plan_prints_the_plan_and_changes_nothing() {
    let env = support::env();
    std::fs::create_dir_all(env.workspace.join("src")).expect("src");
    std::fs::write(env.workspace.join("src/lib.rs"), LIB).expect("lib.rs");
    let server = support::scripted(json!([
        call("call_read", "read_file", json!({"path": "src/lib.rs"})),
        edit(),
        present(),
        {"text": "never requested: the run ends with the plan"}
    ]))
    .await;
    let out =
        support::output(support::lathe(&env, &server.url(), &["-p", "swap the operands", "--plan"])).await;
    let stderr = support::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{PLAN}\n"), "stdout holds the plan alone");
    assert!(stderr.contains("denied: edit_file `src/lib.rs`"), "plan mode denied the edit:\n{stderr}");
    assert!(stderr.contains("plan mode is read-only"), "{stderr}");
    assert_eq!(std::fs::read_to_string(env.workspace.join("src/lib.rs")).unwrap_or_default(), LIB);

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no request after exit_plan_mode");
    for request in &requests {
        assert!(offered_tools(&request.body).contains(&"exit_plan_mode".to_string()), "offered in plan mode");
    }
    let plans: Vec<_> = std::fs::read_dir(env.home.join("plans")).expect("plans").flatten().collect();
    assert_eq!(plans.len(), 1, "{plans:?}");
    assert_eq!(std::fs::read_to_string(plans[0].path()).unwrap_or_default(), format!("{PLAN}\n"));

    // The JSON result carries it as `plan`; without plan mode the tool is not offered at all.
    let server = support::scripted(json!([present()])).await;
    let args = ["-p", "plan it", "--plan", "--output-format", "json"];
    let out = support::output(support::lathe(&env, &server.url(), &args)).await;
    let result: Value = serde_json::from_slice(&out.stdout).expect("one JSON result");
    assert_eq!(out.status.code(), Some(0), "{result}");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["plan"], format!("{PLAN}\n"));

    let server = support::scripted(json!([{"text": "hello"}])).await;
    let out = support::output(support::lathe(&env, &server.url(), &["-p", "hi"])).await;
    assert_eq!(out.status.code(), Some(0));
    let requests = server.requests();
    assert!(!offered_tools(&requests[0].body).contains(&"exit_plan_mode".to_string()));
}

/// The pane's status line shows `mode` (the model and the mode, as `claude-sonnet-4-5 · plan`).
fn status(mode: &str) -> String {
    format!("claude-sonnet-4-5 · {mode}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_dialog_runs_the_plan_with_edits_accepted() {
    let setup = setup();
    std::fs::create_dir_all(setup.workspace.join("src")).expect("src");
    std::fs::write(setup.workspace.join("src/lib.rs"), LIB).expect("lib.rs");
    let server = Arc::new(
        scripted(json!([
            call("call_read", "read_file", json!({"path": "src/lib.rs"})),
            present(),
            edit(),
            {"text": "Swapped the operands."}
        ]))
        .await,
    );
    let script = pane_script(&setup, &server, &[]);
    let (workspace, dir, mock) = (setup.workspace.clone(), setup.tmp.path().to_path_buf(), server.clone());
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for(&status("default"), WAIT);
        pane.type_text("/plan swap the operands");
        pane.keys(&["Enter"]);

        let shown = pane.wait_for("Plan ready. Run it?", WAIT);
        for line in [
            "● Plan",
            "1. In src/lib.rs, change a + b to b + a.",
            "1 run it, edits accepted",
            "3 keep planning",
        ] {
            assert!(shown.contains(line), "`{line}` on the pane:\n{shown}");
        }
        assert_eq!(std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap_or_default(), LIB);
        // The footer shows the mode once the switch's notice has gone.
        pane.wait_for(&status("plan"), WAIT);

        pane.keys(&["1"]);
        let shown = pane.wait_for("Swapped the operands.", WAIT);
        assert!(!shown.contains("Edit this file?"), "accept-edits runs the edit unasked:\n{shown}");
        assert!(shown.contains("plan approved · accept-edits"), "{shown}");
        pane.wait_for(&status("accept-edits"), WAIT);
        let after = std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap_or_default();
        assert!(after.contains("    b + a\n"), "the scripted edit happened:\n{after}");

        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("scenario");

    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    assert!(offered_tools(&requests[1].body).contains(&"exit_plan_mode".to_string()));
    let approved = tool_result_text(&requests[2].body);
    assert!(
        approved.contains("approved the plan and left plan mode: the permission mode is now accept-edits")
    );
    assert!(
        !offered_tools(&requests[2].body).contains(&"exit_plan_mode".to_string()),
        "offered in plan mode only"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_planning_sends_the_feedback_and_changes_nothing() {
    let setup = setup();
    std::fs::create_dir_all(setup.workspace.join("src")).expect("src");
    std::fs::write(setup.workspace.join("src/lib.rs"), LIB).expect("lib.rs");
    let server = Arc::new(scripted(json!([present(), {"text": "Revising the plan."}])).await);
    let script = pane_script(&setup, &server, &[]);
    let (workspace, dir, mock) = (setup.workspace.clone(), setup.tmp.path().to_path_buf(), server.clone());
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for(&status("default"), WAIT);
        pane.type_text("/plan");
        pane.keys(&["Enter"]);
        pane.wait_for(&status("plan"), WAIT);
        pane.type_text("swap the operands");
        pane.keys(&["Enter"]);

        pane.wait_for("Plan ready. Run it?", WAIT);
        pane.keys(&["3"]);
        pane.wait_for("What should change in the plan?", WAIT);
        pane.type_text("also update the README");
        pane.keys(&["Enter"]);
        let shown = pane.wait_for("Revising the plan.", WAIT);
        assert!(shown.contains("keep planning: also update the README"), "{shown}");
        // The mode stays plan (the status line may be drawn a frame after the answer).
        pane.wait_for(&status("plan"), WAIT);

        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        pane.wait_for(SETTINGS_END, WAIT);
    })
    .await
    .expect("scenario");

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let feedback = tool_result_text(&requests[1].body);
    assert!(feedback.contains("Their feedback: also update the README"), "{feedback}");
    assert!(feedback.contains("stays in plan mode and nothing was changed"), "{feedback}");
    assert!(offered_tools(&requests[1].body).contains(&"exit_plan_mode".to_string()), "still planning");
    assert_eq!(std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap_or_default(), LIB);
}
