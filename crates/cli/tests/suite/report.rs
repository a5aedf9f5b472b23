//! The run report at the end of `lathe -p`, through the real binary against lathe-mock: an edit,
//! a real `python3 -m unittest` run in the workspace, then an answer that says it is fixed. What
//! the user sees: `result.report` in the JSON formats, the `lathe: report:` lines on stderr in
//! text mode.

use lathe_mock::MockServer;
use serde_json::{Value, json};

use super::harness::{Env, FAST_RETRIES, json_lines, output, serve, stderr, stdout};

const APP: &str = "def add(a, b):\n    return a - b\n";

const TEST_APP: &str = "import unittest\n\nfrom app import add\n\n\nclass AddTest(unittest.TestCase):\n    \
                        def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";

const TEST_COMMAND: &str = "python3 -m unittest -q";

const ANSWER: &str = "Fixed, all tests pass.";

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "arguments": arguments}]})
}

/// A workspace with a failing test of `app.py`.
fn workspace() -> Env {
    let env = Env::new(FAST_RETRIES);
    env.put("app.py", APP);
    env.put("test_app.py", TEST_APP);
    env
}

/// The model reads `app.py`, replaces its `return` line by `new_body`, runs the tests, then
/// answers [`ANSWER`].
async fn fixing_run(new_body: &str) -> MockServer {
    serve(json!({"turns": [
        call("r1", "read_file", json!({"path": "app.py"})),
        call("e1", "edit_file", json!({"path": "app.py", "old_string": "    return a - b\n", "new_string": new_body})),
        call("s1", "shell", json!({"command": TEST_COMMAND})),
        {"text": ANSWER},
    ]}))
    .await
}

/// A wrong fix (the test still fails) and a right one, each two lines for one.
const WRONG_FIX: &str = "    result = a - b\n    return result\n";
const RIGHT_FIX: &str = "    result = a + b\n    return result\n";

/// The `result` object of a json run.
async fn json_result(env: &Env, server: &MockServer) -> Value {
    let out = output(env.run_against(
        server,
        "anthropic",
        "fix add() so the tests pass",
        &["--yolo", "--output-format", "json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json_lines(&out).pop().expect("a result line")
}

#[tokio::test]
async fn a_claim_after_a_failing_test_run_is_quoted_with_the_exit_status() {
    let env = workspace();
    let server = fixing_run(WRONG_FIX).await;
    let result = json_result(&env, &server).await;
    assert_eq!(result["result"], ANSWER);
    let report = &result["report"];
    assert_eq!(report["commands"], json!([{"command": TEST_COMMAND, "exit_code": 1, "test": true}]));
    assert_eq!(
        report["claims"],
        json!([{"sentence": ANSWER, "reason": format!("the last test run (`{TEST_COMMAND}`) exited 1")}])
    );
}

#[tokio::test]
async fn text_mode_shows_the_report_on_stderr_after_the_answer() {
    let env = workspace();
    let server = fixing_run(WRONG_FIX).await;
    let out = output(env.run_against(&server, "anthropic", "fix add() so the tests pass", &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), ANSWER);
    let err = stderr(&out);
    let report: Vec<&str> = err.lines().filter(|line| line.starts_with("lathe: report: ")).collect();
    assert_eq!(
        report,
        vec![
            "lathe: report: 1 file changed (+2 −1): app.py (+2 −1)",
            "lathe: report: 1 command: `python3 -m unittest -q` → exit 1",
            "lathe: report: claim without evidence: \"Fixed, all tests pass.\" — the last test run \
             (`python3 -m unittest -q`) exited 1",
        ],
        "{err}"
    );
}

#[tokio::test]
async fn a_claim_after_a_passing_test_run_is_not_flagged() {
    let env = workspace();
    let server = fixing_run(RIGHT_FIX).await;
    let result = json_result(&env, &server).await;
    let report = &result["report"];
    assert_eq!(report["commands"], json!([{"command": TEST_COMMAND, "exit_code": 0, "test": true}]));
    assert_eq!(report["claims"], json!([]));
    assert_eq!(
        std::fs::read_to_string(env.workspace.join("app.py")).expect("app.py"),
        format!("def add(a, b):\n{RIGHT_FIX}")
    );
}

#[tokio::test]
async fn the_report_counts_the_lines_each_file_tool_changed() {
    let env = workspace();
    let server = serve(json!({"turns": [
        call("r1", "read_file", json!({"path": "app.py"})),
        call("e1", "edit_file", json!({"path": "app.py", "old_string": "    return a - b\n", "new_string": RIGHT_FIX})),
        call("w1", "write_file", json!({"path": "notes/todo.md", "content": "- add tests\n- add docs\n- ship\n"})),
        call("e2", "edit_file", json!({"path": "app.py", "old_string": "def add(a, b):\n", "new_string": "def add(a: int, b: int) -> int:\n"})),
        {"text": "Done."},
    ]}))
    .await;
    let result = json_result(&env, &server).await;
    assert_eq!(
        result["report"]["files"],
        json!([
            {"path": "app.py", "added": 3, "removed": 2},
            {"path": "notes/todo.md", "added": 3, "removed": 0},
        ])
    );
    assert_eq!(result["report"]["commands"], json!([]));
    assert_eq!(result["report"]["claims"], json!([]));
}

#[tokio::test]
async fn a_run_that_did_nothing_prints_no_report() {
    let env = Env::new(FAST_RETRIES);
    let server = serve(json!({"turns": [{"text": "Paris."}]})).await;
    let out = output(env.run_against(&server, "anthropic", "capital of France?", &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Paris.");
    assert!(!stderr(&out).contains("lathe: report:"), "{}", stderr(&out));
    let server = serve(json!({"turns": [{"text": "Paris."}]})).await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "capital of France?",
        &["--output-format", "stream-json"],
    ))
    .await;
    let result = json_lines(&out).pop().expect("a result line");
    assert_eq!(result["report"], json!({"files": [], "commands": [], "checks": [], "claims": []}));
}
