//! Plan mode as a flow, through the real binary against `lathe-mock`: headless `lathe -p --plan`
//! prints the plan the model presented with `exit_plan_mode` and changes nothing.

use serde_json::{Value, json};

use super::support::{self, call, offered_tools};

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
const PLAN: &str = "# Swap the operands\n\n1. In `src/lib.rs`, change `a + b` to `b + a`.\n2. Run the tests.";

fn edit() -> Value {
    call("call_edit", "edit_file", json!({"path": "src/lib.rs", "old_string": "a + b", "new_string": "b + a"}))
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
    let out = support::output(support::lathe(&env, &server.url(), &["-p", "swap the operands", "--plan"])).await;
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
