//! Verify before claiming (`verify_changes`, on by default for the embedded local model): an
//! answer after a change with no passing check since is not taken; Lathe names the check, and a
//! run whose check never passes ends not-success (exit 4) with the check's output, never with the
//! model's "Fixed". Off by default for other providers.

use serde_json::{Value, json};

use super::harness::{Env, output, request_texts, serve, stderr, stdout};

const CONFIG: &str = "verify_changes = true\n[retry]\nmax_retries = 0\n";

/// Reads greet.py, then replaces `old` with `new` in it (one response each).
fn edit(id: &str, old: &str, new: &str) -> [Value; 2] {
    [
        json!({"tool_calls": [{"id": format!("{id}r"), "name": "read_file", "arguments": {"path": "greet.py"}}]}),
        json!({"tool_calls": [{"id": id, "name": "edit_file",
               "arguments": {"path": "greet.py", "old_string": old, "new_string": new}}]}),
    ]
}

fn shell(id: &str, command: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "shell", "arguments": {"command": command}}]})
}

fn workspace(env: &Env) {
    env.put("greet.py", "print(\"Helo, world!\")\n");
    env.put(
        "check.py",
        "import subprocess, sys\nout = subprocess.run([sys.executable, 'greet.py'], capture_output=True, text=True).stdout\n\
         print('greet.py printed', out.strip())\nsys.exit(0 if out.strip() == 'Hello, world!' else 1)\n",
    );
}

#[tokio::test]
async fn an_answer_before_any_check_is_sent_back_with_the_check_to_run() {
    let env = Env::new(CONFIG);
    workspace(&env);
    let [read, change] = edit("e1", "Helo", "Hello");
    let server = serve(json!({"turns": [
        read, change,
        {"text": "Fixed the typo."},
        shell("s1", "python3 greet.py"),
        {"text": "Fixed: greet.py prints Hello, world!"},
    ]}))
    .await;
    let prompt = "Fix the typo in greet.py so that `python3 greet.py` prints Hello, world!";
    let out = output(env.run_against(&server, "anthropic", prompt, &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Fixed: greet.py prints Hello, world!");
    let requests = request_texts(&server);
    assert_eq!(requests.len(), 5);
    assert!(
        requests[3]
            .contains("[check] You changed greet.py but have not run anything since. Run `python3 greet.py`")
    );
}

#[tokio::test]
async fn a_check_that_never_passes_ends_not_success_with_its_output_not_the_claim() {
    let env = Env::new(CONFIG);
    workspace(&env);
    let [read, change] = edit("e1", "Helo", "Hallo");
    let server = serve(json!({"turns": [
        read, change,
        {"text": "Fixed."},
        shell("s1", "python3 check.py"),
        {"text": "Fixed."},
        {"text": "Fixed."},
        {"text": "Fixed."},
        {"text": "never asked"},
    ]}))
    .await;
    let prompt = "Fix greet.py so that `python3 check.py` passes";
    let out = output(env.run_against(&server, "anthropic", prompt, &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(!said.contains("Fixed"), "{said}");
    assert!(said.contains("the change is not verified: `python3 check.py` failed (exit 1)"), "{said}");
    assert!(said.contains("greet.py printed Hallo, world!"), "{said}");
    assert!(stderr(&out).contains("stopped, no progress: the change is not verified"), "{}", stderr(&out));
    let requests = request_texts(&server);
    assert_eq!(requests.len(), 7, "three answers sent back, then the run ends");
    assert!(requests[5].contains("[check] `python3 check.py` failed after your change (exit 1)"));
}

#[tokio::test]
async fn other_providers_take_the_answer_unless_configured() {
    let env = Env::new("[retry]\nmax_retries = 0\n");
    workspace(&env);
    let [read, change] = edit("e1", "Helo", "Hello");
    let server = serve(json!({"turns": [read, change, {"text": "Fixed the typo."}]})).await;
    let out = output(env.run_against(&server, "anthropic", "Fix the typo in greet.py", &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(request_texts(&server).len(), 3);
    assert_eq!(
        std::fs::read_to_string(env.workspace.join("greet.py")).unwrap(),
        "print(\"Hello, world!\")\n"
    );
}

#[tokio::test]
async fn an_answer_that_claims_a_change_the_run_did_not_make_is_not_taken() {
    let env = Env::new(CONFIG);
    workspace(&env);
    let claim = json!({"text": "Fixed the typo in greet.py: it now prints Hello, world!"});
    let server = serve(json!({"turns": [claim, claim, claim, claim, {"text": "never asked"}]})).await;
    let out = output(env.run_against(&server, "anthropic", "Fix the typo in greet.py", &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(!said.contains("Fixed"), "{said}");
    assert!(said.contains("greet.py was not changed in this run"), "{said}");
    let requests = request_texts(&server);
    assert_eq!(requests.len(), 4);
    assert!(requests[1].contains("[check] Your answer says"), "{}", requests[1]);
}

#[tokio::test]
async fn a_change_task_that_changed_nothing_ends_not_success_and_a_question_is_answered() {
    let env = Env::new(CONFIG);
    workspace(&env);
    let answer = json!({"text": "Added a function multiply(a, b) that returns a times b."});
    let server = serve(json!({"turns": [answer, answer, answer, answer]})).await;
    let out = output(env.run_against(
        &server,
        "anthropic",
        "Add a function multiply(a, b) to greet.py",
        &["--yolo"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stdout(&out).contains("no change made: the task asks for a change"), "{}", stdout(&out));
    assert!(request_texts(&server)[1].contains("[check] The task asks for a change, but no file changed"));

    let server = serve(json!({"turns": [{"text": "It prints Helo, world!"}]})).await;
    let out = output(env.run_against(&server, "anthropic", "What does greet.py print?", &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(request_texts(&server).len(), 1);
}

#[tokio::test]
async fn an_answer_that_copies_the_local_prompts_example_is_not_taken() {
    let env = Env::new(CONFIG);
    workspace(&env);
    // A question: nothing to verify, but the answer is the worked example's, not this run's.
    let copied = json!({"text": "zz_sample.py line 1 now says Quirk; running it printed Quirk mode."});
    let server = serve(json!({"turns": [copied, {"text": "greet.py prints Helo, world!"}]})).await;
    let out = output(env.run_against(&server, "anthropic", "What does greet.py print?", &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "greet.py prints Helo, world!");
    let requests = request_texts(&server);
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].contains("[check] Your answer repeats the system prompt's example"),
        "{}",
        requests[1]
    );

    let server = serve(json!({"turns": [copied, copied, copied, copied, {"text": "never asked"}]})).await;
    let out = output(env.run_against(&server, "anthropic", "What does greet.py print?", &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(!said.contains("Quirk mode"), "{said}");
    assert!(said.contains("the answer copies the system prompt's example"), "{said}");
    assert_eq!(request_texts(&server).len(), 4);
}

#[tokio::test]
async fn a_run_the_loop_guards_or_the_turn_limit_end_says_what_is_not_verified() {
    let env = Env::new(CONFIG);
    workspace(&env);
    let [read, change] = edit("e1", "Helo", "Hallo");
    let again = shell("s1", "python3 check.py");
    let server =
        serve(json!({"turns": [read, change, again, again, again, again, again, {"text": "never"}]})).await;
    let prompt = "Fix greet.py so that `python3 check.py` passes";
    let out = output(env.run_against(&server, "anthropic", prompt, &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.contains("the change is not verified: `python3 check.py` failed (exit 1)"), "{said}");
    assert!(said.contains("greet.py printed Hallo, world!"), "{said}");

    // The turn limit after a change that no check followed.
    let [read, change] = edit("e2", "Hallo", "Hullo");
    let server = serve(json!({"turns": [read, change, {"text": "never"}]})).await;
    let out = output(env.run_against(&server, "anthropic", prompt, &["--yolo", "--max-turns", "2"])).await;
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("the change is not verified: no check ran after it"), "{}", stdout(&out));
}

/// The check Lathe derives from the stated result in [`STATED_PROMPT`].
const STATED_CHECK: &str = "python3 -B -c 'import series as m1; r = m1.sum_to(4); assert r == 10, r'";
const STATED_PROMPT: &str =
    "sum_to in series.py has an off-by-one bug: sum_to(4) returns 6 but should return 10. Fix it.";

/// Reads series.py and replaces its loop's range with `range` (one response each).
fn fix_series(range: &str) -> [Value; 2] {
    [
        json!({"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "series.py"}}]}),
        json!({"tool_calls": [{"id": "e1", "name": "edit_file",
               "arguments": {"path": "series.py", "old_string": "range(1, n)", "new_string": range}}]}),
    ]
}

#[tokio::test]
async fn a_result_the_prompt_states_is_the_check_and_a_wrong_fix_ends_with_what_the_code_returned() {
    let env = Env::new(CONFIG);
    let series =
        "def sum_to(n):\n    total = 0\n    for i in range(1, n):\n        total += i\n    return total\n";
    env.put("series.py", series);
    // A fix that compiles but still returns 6: compiling it is no check of the stated result.
    let [read, change] = fix_series("range(0, n)");
    let fixed = json!({"text": "Fixed the off-by-one in sum_to."});
    let server = serve(json!({"turns": [
        read, change, shell("s1", "python3 -m py_compile series.py"), fixed,
        shell("s2", STATED_CHECK), fixed, fixed, fixed, {"text": "never asked"},
    ]}))
    .await;
    let out = output(env.run_against(&server, "anthropic", STATED_PROMPT, &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(!said.contains("Fixed"), "{said}");
    assert!(said.contains("AssertionError: 6"), "{said}");
    let requests = request_texts(&server);
    assert_eq!(requests.len(), 8);
    let asked = format!("have not run anything since. Run `{STATED_CHECK}` now");
    assert!(requests[4].contains(&asked), "{}", requests[4]);

    // The right fix passes the same check, and its answer is taken.
    env.put("series.py", series);
    let [read, change] = fix_series("range(1, n + 1)");
    let server = serve(json!({"turns": [read, change, shell("s1", STATED_CHECK), fixed]})).await;
    let out = output(env.run_against(&server, "anthropic", STATED_PROMPT, &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Fixed the off-by-one in sum_to.");
    assert_eq!(request_texts(&server).len(), 4);
}

#[tokio::test]
async fn the_command_a_change_task_names_runs_before_the_first_request_when_the_policy_allows_it() {
    let env = Env::new(CONFIG);
    workspace(&env);
    let prompt = "Fix greet.py so that `python3 check.py` passes";
    let ran = "[check] Before your first step, Lathe ran `python3 check.py`:\\ngreet.py printed Helo, world!\\nexit code: 1";
    let gave_up = json!({"text": "I could not fix it."});
    let server = serve(json!({"turns": [gave_up, gave_up, gave_up, gave_up]})).await;
    let out = output(env.run_against(&server, "anthropic", prompt, &["--yolo"])).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(request_texts(&server)[0].contains(ran), "{}", request_texts(&server)[0]);
    // Headless default mode would ask before running it: it is not run, and not said to be.
    let server = serve(json!({"turns": [gave_up, gave_up, gave_up, gave_up]})).await;
    output(env.run_against(&server, "anthropic", prompt, &[])).await;
    assert!(!request_texts(&server)[0].contains("Before your first step"), "{}", request_texts(&server)[0]);
    // A question names a command too, but asks for no change: nothing runs first.
    let server = serve(json!({"turns": [{"text": "It checks greet.py's output."}]})).await;
    let out =
        output(env.run_against(&server, "anthropic", "What does `python3 check.py` check?", &["--yolo"]))
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!request_texts(&server)[0].contains("Before your first step"));
}
