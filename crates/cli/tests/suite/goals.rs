//! Goals through the real binary against lathe-mock: `--goal` with a real `python3 -m pytest`
//! check in a temp git repository; the evaluator is answered by its `[goal evaluation]` marker.
//! Met needs the check's exit 0 and the evaluator; rewritten tests end as needs_review; a goal
//! that cannot be met stalls within its bound; free text is not a verdict.

use std::process::Command;

use serde_json::{Value, json};

use super::harness::{Env, git, json_lines, output, serve, stderr};

const CHECK: &str = "python3 -m pytest -q";
const MET: &str = r#"{"met": true, "reason": "the check passes", "impossible": false}"#;
const NOT_MET: &str = r#"{"met": false, "reason": "the tests still fail", "impossible": false}"#;

/// A git repository with `calc.py` (a wrong `add`) and a failing `tests/test_calc.py`.
fn project() -> Env {
    let env = Env::new("[retry]\nmax_retries = 0\n");
    env.put("calc.py", "def add(a, b):\n    return a - b\n");
    env.put("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n");
    env.put("conftest.py", "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n");
    git(&env.workspace, &["init", "-q", "-b", "main"]);
    git(&env.workspace, &["add", "."]);
    git(&env.workspace, &["commit", "-q", "-m", "first"]);
    env
}

fn edit(id: &str, path: &str, old: &str, new: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "edit_file",
        "arguments": {"path": path, "old_string": old, "new_string": new}}],
        "usage": {"input_tokens": 100, "output_tokens": 10}})
}

fn read(id: &str, path: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "read_file", "arguments": {"path": path}}],
        "usage": {"input_tokens": 100, "output_tokens": 10}})
}

fn answer(text: &str) -> Value {
    json!({"text": text, "usage": {"input_tokens": 100, "output_tokens": 10}})
}

fn script(turns: Vec<Value>, verdict: &str) -> Value {
    json!({"turns": turns, "side_replies": [{"when_last_user_contains": "[goal evaluation]", "text": verdict}]})
}

fn result(out: &std::process::Output) -> Value {
    json_lines(out).into_iter().find(|line| line["type"] == "result").expect("a result line")
}

fn checks(env: &Env) -> Vec<Value> {
    env.sessions_text()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|item| item["meta"] == "goal_check")
        .collect()
}

fn pytest_available() -> bool {
    Command::new("python3").args(["-m", "pytest", "--version"]).output().is_ok_and(|out| out.status.success())
}

#[tokio::test]
async fn a_wrong_fix_then_the_right_one_meets_the_goal_in_two_iterations() {
    assert!(pytest_available(), "python3 -m pytest is needed (scripts/install-test-deps.sh installs it)");
    let env = project();
    let server = serve(script(
        vec![
            read("r1", "calc.py"),
            edit("c1", "calc.py", "a - b", "a * b"),
            answer("Fixed, all tests pass."),
            edit("c2", "calc.py", "a * b", "a + b"),
            answer("Fixed add."),
        ],
        MET,
    ))
    .await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "fix add in calc.py",
        &[
            "--goal",
            "tests pass",
            "--goal-check",
            CHECK,
            "--output-format",
            "stream-json",
            "--permission-mode",
            "accept-edits",
        ],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stderr(&out), super::harness::stdout(&out));
    let result = result(&out);
    assert_eq!(result["goal"]["status"], "met", "{result}");
    assert_eq!(result["goal"]["iterations"], 2);
    assert_eq!(result["goal"]["check_exit"], 0);
    assert_eq!(result["subtype"], "success");
    let codes: Vec<Value> = checks(&env).iter().map(|check| check["exit_code"].clone()).collect();
    assert_eq!(codes, [json!(1), json!(0)]);
    let evaluations: Vec<String> = server
        .requests()
        .iter()
        .map(|request| request.body.to_string())
        .filter(|body| body.contains("[goal evaluation]"))
        .collect();
    assert_eq!(evaluations.len(), 2, "one evaluator request per iteration");
    assert!(evaluations.iter().all(|body| !body.contains("\"tools\":[{")), "the evaluator gets no tools");
    assert_eq!(server.requests().len(), 7, "5 turns and 2 evaluator requests");
}

#[tokio::test]
async fn rewriting_the_test_to_pass_ends_as_needs_review_with_its_diff() {
    assert!(pytest_available(), "python3 -m pytest is needed");
    let env = project();
    let server = serve(script(
        vec![
            read("r1", "tests/test_calc.py"),
            edit("c1", "tests/test_calc.py", "assert add(2, 3) == 5", "assert True"),
            answer("Done."),
        ],
        MET,
    ))
    .await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "make the tests pass",
        &[
            "--goal",
            "tests pass",
            "--goal-check",
            CHECK,
            "--output-format",
            "json",
            "--permission-mode",
            "accept-edits",
        ],
    ))
    .await;
    assert_eq!(out.status.code(), Some(1), "{}{}", stderr(&out), super::harness::stdout(&out));
    let result = result(&out);
    assert_eq!(result["goal"]["status"], "needs_review", "{result}");
    assert_eq!(result["subtype"], "error_goal_needs_review");
    let change = &result["goal"]["protected_changes"][0];
    assert_eq!(change["path"], "tests/test_calc.py");
    assert!(change["diff"].as_str().unwrap().contains("+    assert True"), "{change}");
}

#[tokio::test]
async fn a_check_that_always_fails_stalls_within_the_bound_and_costs_what_the_mock_counted() {
    let env = project();
    let turns: Vec<Value> = (0..10).map(|n| answer(&format!("attempt {n}"))).collect();
    let server = serve(script(turns, NOT_MET)).await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "make it pass",
        &["--goal", "tests pass", "--goal-check", "false", "--output-format", "json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let result = result(&out);
    assert_eq!(result["goal"]["status"], "stalled", "{result}");
    assert_eq!(result["goal"]["iterations"], 3);
    assert_eq!(server.requests().len(), 6, "3 turns and 3 evaluator requests, no more");
    // The mock reports 100 + 10 tokens per scripted turn, and for an evaluator request the
    // request's own size (compact JSON bytes / 4) and the reply's.
    let evaluations: Vec<u64> = server
        .requests()
        .iter()
        .map(|request| request.body.to_string())
        .filter(|body| body.contains("[goal evaluation]"))
        .map(|body| (body.len() as u64).div_ceil(4))
        .collect();
    assert_eq!(evaluations.len(), 3);
    let input = 300 + evaluations.iter().sum::<u64>();
    let output_tokens = 30 + 3 * (NOT_MET.len() as u64).div_ceil(4);
    assert_eq!(result["usage"]["input_tokens"], input, "{result}");
    assert_eq!(result["usage"]["output_tokens"], output_tokens, "{result}");
}

#[tokio::test]
async fn free_text_from_the_evaluator_is_not_met() {
    let env = project();
    let server =
        serve(script(vec![answer("done"), answer("done"), answer("done")], "the goal has not been met yet"))
            .await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "fix it",
        &["--goal", "the code is tidy", "--goal-max-iterations", "2", "--output-format", "json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let result = result(&out);
    assert_eq!(result["goal"]["status"], "budget_limited", "{result}");
    assert_eq!(result["goal"]["judged_from_transcript"], true);
    assert!(result["goal"]["last_reason"].as_str().unwrap().contains("not a verdict"), "{result}");
}

#[tokio::test]
async fn a_hanging_check_is_killed_and_an_overlong_condition_is_refused() {
    let env = project();
    let long = "x".repeat(4_001);
    let out = output(env.lathe(&["-p", "hi", "--goal", &long])).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("4001 characters, over the limit of 4000"), "{}", stderr(&out));

    let server = serve(script(vec![answer("done")], MET)).await;
    let command = env.run_against(
        &server,
        "anthropic",
        "fix it",
        &[
            "--goal",
            "tests pass",
            "--goal-check",
            "sleep 30",
            "--goal-check-timeout",
            "0.5",
            "--goal-max-iterations",
            "1",
            "--output-format",
            "json",
        ],
    );
    let started = std::time::Instant::now();
    let out = output(command).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let result = result(&out);
    assert_eq!(result["goal"]["status"], "budget_limited", "{result}");
    assert_eq!(checks(&env)[0]["timed_out"], true);
}

#[tokio::test]
async fn a_goal_killed_mid_way_goes_on_with_its_count_after_continue() {
    let env = project();
    let slow = json!({"text": "still working", "first_byte_delay_ms": 30_000});
    let server = serve(script(vec![answer("first try"), slow], NOT_MET)).await;
    let mut child = env
        .run_against(&server, "anthropic", "fix it", &["--goal", "tests pass", "--goal-check", "false"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("lathe");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    // Killed once the first verdict is saved and the second turn's request is waiting for its answer
    // (turn 1, the evaluator, turn 2).
    while !(env.sessions_text().contains("\"goal_verdict\"") && server.requests().len() >= 3) {
        assert!(std::time::Instant::now() < deadline, "no verdict was recorded");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();

    let turns: Vec<Value> = (0..5).map(|n| answer(&format!("try {n}"))).collect();
    let server = serve(script(turns, NOT_MET)).await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "go on",
        &["--continue", "--output-format", "stream-json"],
    ))
    .await;
    let lines = json_lines(&out);
    let warned = lines.iter().any(|line| {
        line["type"] == "warning"
            && line["message"]
                .as_str()
                .is_some_and(|text| text.contains("resuming the goal \"tests pass\" at iteration 1 of 20"))
    });
    assert!(warned, "{}", super::harness::stdout(&out));
    let result = result(&out);
    // The check is still `false` (stored with the goal, not given again): the goal goes on from
    // iteration 1 and stalls after 3 more.
    assert_eq!(result["goal"]["status"], "stalled", "{result}");
    assert_eq!(result["goal"]["iterations"], 4, "{result}");
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(checks(&env).iter().filter(|check| check["command"] == "false").count(), 4);
}

#[tokio::test]
async fn a_claim_of_passing_tests_without_an_edit_is_not_met_and_flagged() {
    assert!(pytest_available(), "python3 -m pytest is needed");
    let env = project();
    let server = serve(script(vec![answer("All tests pass.")], NOT_MET)).await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "make the tests pass",
        &[
            "--goal",
            "tests pass",
            "--goal-check",
            CHECK,
            "--goal-max-iterations",
            "1",
            "--output-format",
            "json",
        ],
    ))
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let result = result(&out);
    assert_eq!(result["goal"]["status"], "budget_limited", "{result}");
    assert_eq!(result["goal"]["check_exit"], 1);
    assert_eq!(result["report"]["checks"][0]["command"], CHECK, "{result}");
    assert_eq!(result["report"]["checks"][0]["exit_code"], 1);
    let claims = result["report"]["claims"].as_array().expect("claims");
    assert!(claims.iter().any(|claim| claim["sentence"] == "All tests pass."), "{result}");
}

/// The evaluator requests (their last user message starts with the marker) the mock received.
fn evaluator_requests(server: &lathe_mock::MockServer) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .map(|request| request.body)
        .filter(|body| body.to_string().contains("[goal evaluation]"))
        .collect()
}

#[tokio::test]
async fn the_evaluator_goes_to_the_configured_model_with_the_verdict_schema_where_the_protocol_takes_one() {
    for provider in ["openai", "responses", "anthropic"] {
        let env = Env::new("[retry]\nmax_retries = 0\n[goal]\nevaluator_model = \"judge-1\"\n");
        let server = serve(script(vec![answer("done")], MET)).await;
        let out = output(env.run_against(
            &server,
            provider,
            "fix it",
            &["--model", "worker-1", "--goal", "the code is tidy", "--output-format", "json"],
        ))
        .await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{provider}: {}{}",
            stderr(&out),
            super::harness::stdout(&out)
        );
        assert_eq!(result(&out)["goal"]["status"], "met", "{provider}");
        let evaluations = evaluator_requests(&server);
        assert_eq!(evaluations.len(), 1, "{provider}");
        let body = &evaluations[0];
        assert_eq!(body["model"], "judge-1", "{provider}: the evaluator's model");
        let turns: Vec<Value> =
            server.requests().into_iter().map(|request| request.body["model"].clone()).collect();
        assert_eq!(
            turns,
            [json!("worker-1"), json!("judge-1")],
            "{provider}: the turn stays on the session's model"
        );
        let schema = match provider {
            "openai" => {
                assert_eq!(body["response_format"]["type"], "json_schema", "{body}");
                assert_eq!(body["response_format"]["json_schema"]["name"], "goal_verdict");
                assert_eq!(body["response_format"]["json_schema"]["strict"], true);
                body["response_format"]["json_schema"]["schema"].clone()
            }
            "responses" => {
                assert_eq!(body["text"]["format"]["type"], "json_schema", "{body}");
                assert_eq!(body["text"]["format"]["name"], "goal_verdict");
                body["text"]["format"]["schema"].clone()
            }
            _ => {
                assert!(
                    body.get("response_format").is_none() && body.get("output_config").is_none(),
                    "{body}"
                );
                assert!(
                    !body.to_string().contains("goal_verdict"),
                    "Anthropic gets the JSON in the prompt only"
                );
                continue;
            }
        };
        assert_eq!(schema["required"], json!(["met", "reason", "impossible"]), "{provider}: {schema}");
        assert_eq!(schema["properties"]["met"]["type"], "boolean");
        assert_eq!(schema["additionalProperties"], false);
    }
}

#[tokio::test]
async fn a_server_that_refuses_the_schema_is_asked_again_without_it() {
    let env = Env::new("[retry]\nmax_retries = 0\n");
    let refused =
        json!({"error": {"status": 400, "message": "response_format json_schema is not supported"}});
    // The turn, the evaluator's request (refused), the evaluator's request again.
    let server = serve(json!({"turns": [answer("done"), refused, {"text": MET}]})).await;
    let out = output(env.run_against(
        &server,
        "openai",
        "fix it",
        &["--goal", "the code is tidy", "--output-format", "json"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stderr(&out), super::harness::stdout(&out));
    assert_eq!(result(&out)["goal"]["status"], "met");
    let bodies: Vec<Value> = server.requests().into_iter().map(|request| request.body).collect();
    assert_eq!(bodies.len(), 3);
    assert!(bodies[1].get("response_format").is_some() && bodies[2].get("response_format").is_none());
}

#[tokio::test]
async fn a_wall_clock_limit_ends_the_goal_budget_limited_and_a_bad_duration_is_refused() {
    let env = project();
    let out = output(env.lathe(&["-p", "hi", "--goal", "tests pass", "--goal-max-wall", "5x"])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("`5x` is not a duration"), "{}", stderr(&out));

    let turns: Vec<Value> = (0..5).map(|n| answer(&format!("try {n}"))).collect();
    let server = serve(script(turns, NOT_MET)).await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "fix it",
        &[
            "--goal",
            "tests pass",
            "--goal-check",
            "sleep 1",
            "--goal-max-wall",
            "1s",
            "--output-format",
            "json",
        ],
    ))
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let result = result(&out);
    assert_eq!(result["goal"]["status"], "budget_limited", "{result}");
    assert_eq!(result["goal"]["iterations"], 1, "{result}");
    assert!(result["goal"]["last_reason"].as_str().unwrap().contains("time limit"), "{result}");
}
