//! `ask_user {question, options?}` through the real binary against `lathe-mock`: headless, the
//! call is answered at once with an error saying no user is present and the run goes on; a
//! sub-agent is never offered the tool; in the terminal UI the question card sends the chosen
//! option or the typed answer to the model, Esc declines, Ctrl+C interrupts the call like any
//! other, and a session killed while the card is open resumes with every call answered.

use std::process::{Command, Stdio};
use std::sync::Arc;

use serde_json::{Value, json};

use super::support::{self, call, offered_tools, tool_result_text};
use super::tmux::Tmux;
use super::tui::{SETTINGS_END, WAIT, lathe_argv, ledger_items, pane_script, scripted, setup, sigkill};

const QUESTION: &str = "Which database should the cache use?";

fn ask(id: &str, options: &[&str]) -> Value {
    let mut arguments = json!({"question": QUESTION});
    if !options.is_empty() {
        arguments["options"] = json!(options);
    }
    call(id, "ask_user", arguments)
}

/// The tool_result block of `call_id` in a request (Anthropic shape).
fn result_block(body: &Value, call_id: &str) -> Value {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == call_id)
        .unwrap_or_else(|| panic!("no result for {call_id} in {body}"))
}

#[tokio::test]
async fn headless_nobody_answers_the_model_decides_and_the_run_goes_on() {
    let env = support::env();
    let seven = ["a", "b", "c", "d", "e", "f", "g"];
    let server = support::scripted(json!([
        ask("call_many", &seven),
        ask("call_ask", &["PostgreSQL", "SQLite"]),
        {"text": "No one to ask: I assumed SQLite."}
    ]))
    .await;
    let out = support::output(support::lathe(&env, &server.url(), &["-p", "add a cache"])).await;
    let stderr = support::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "No one to ask: I assumed SQLite.\n");

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "one request after each call, none waits");
    assert!(offered_tools(&requests[0].body).contains(&"ask_user".to_string()));
    let refused = result_block(&requests[1].body, "call_many");
    assert_eq!(refused["is_error"], true);
    assert!(refused["content"].to_string().contains("ask_user: 7 options, at most 6"), "{refused}");
    let nobody = result_block(&requests[2].body, "call_ask");
    assert_eq!(nobody["is_error"], true);
    let text = nobody["content"].to_string();
    assert!(text.contains("no user is present to answer"), "{text}");
    assert!(text.contains("Decide yourself and state the assumption you made"), "{text}");
}

#[tokio::test]
async fn a_sub_agent_is_never_offered_the_question_tool() {
    let env = support::env();
    let task = json!({"description": "pick", "prompt": "Pick a database", "subagent_type": "general"});
    let server = support::scripted(json!([
        call("call_task", "task", task),
        ask("call_sub_ask", &["PostgreSQL"]),
        {"text": "Picked PostgreSQL without asking."},
        {"text": "The sub-agent picked PostgreSQL."}
    ]))
    .await;
    let args = ["-p", "pick a database", "--output-format", "stream-json"];
    let out = support::output(support::lathe(&env, &server.url(), &args)).await;
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(offered_tools(&requests[0].body).contains(&"ask_user".to_string()));
    let sub_tools = offered_tools(&requests[1].body);
    assert!(
        sub_tools.contains(&"write_file".to_string()),
        "a general agent inherits the tools: {sub_tools:?}"
    );
    assert!(!sub_tools.contains(&"ask_user".to_string()), "{sub_tools:?}");
    let unknown = result_block(&requests[2].body, "call_sub_ask");
    assert!(unknown["content"].to_string().contains("unknown tool `ask_user`"), "{unknown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_question_card_sends_the_chosen_option_or_the_typed_answer() {
    let setup = setup();
    let server = Arc::new(
        scripted(json!([
            ask("call_first", &["PostgreSQL", "SQLite"]),
            ask("call_second", &["PostgreSQL", "SQLite"]),
            ask("call_third", &[]),
            {"text": "Using DuckDB in memory."}
        ]))
        .await,
    );
    let script = pane_script(&setup, &server, &[]);
    let (dir, mock) = (setup.tmp.path().to_path_buf(), server.clone());
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("add a cache");
        pane.keys(&["Enter"]);

        let shown = pane.wait_for("The model asks you", WAIT);
        for line in [QUESTION, "› 1 PostgreSQL", "2 SQLite", "3 type an answer of your own", "esc declines"]
        {
            assert!(shown.contains(line), "`{line}` on the pane:\n{shown}");
        }
        assert!(!shown.contains("Run this command?"), "no permission is asked:\n{shown}");
        pane.keys(&["Down", "Enter"]);
        pane.wait_for("answered: SQLite", WAIT);

        // The second card: typing starts an answer of one's own.
        pane.wait_until(WAIT, "the second card", |text| text.contains("The model asks you"));
        pane.type_text("DuckDB");
        pane.wait_for("Your answer (enter sends, esc goes back to the options):", WAIT);
        pane.type_text(" in memory");
        pane.keys(&["Enter"]);
        pane.wait_for("answered: DuckDB in memory", WAIT);

        // The third has no options: the answer line is open at once; a number is text there.
        pane.wait_for("Your answer (enter sends, esc declines):", WAIT);
        pane.type_text("2 of them");
        pane.keys(&["Enter"]);
        pane.wait_for("Using DuckDB in memory.", WAIT);

        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("scenario");

    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let first = result_block(&requests[1].body, "call_first");
    assert_eq!(first["content"], json!([{"type": "text", "text": "The user answered: SQLite"}]));
    assert_ne!(first["is_error"], true);
    let second = tool_result_text(&requests[2].body);
    assert!(second.contains("The user answered: DuckDB in memory"), "{second}");
    let third = result_block(&requests[3].body, "call_third");
    assert!(third["content"].to_string().contains("The user answered: 2 of them"), "{third}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_declines_ctrl_c_interrupts_and_a_sub_agent_never_waits() {
    let setup = setup();
    let task = json!({"description": "look", "prompt": "Look around", "subagent_type": "general"});
    let server = Arc::new(
        scripted(json!([
            call("call_task", "task", task),
            ask("call_sub_ask", &["PostgreSQL"]),
            {"text": "Looked around."},
            ask("call_declined", &["PostgreSQL", "SQLite"]),
            ask("call_cancelled", &["PostgreSQL", "SQLite"]),
            {"text": "Still here."}
        ]))
        .await,
    );
    let script = pane_script(&setup, &server, &[]);
    let (dir, mock) = (setup.tmp.path().to_path_buf(), server.clone());
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("add a cache");
        pane.keys(&["Enter"]);

        // The sub-agent's call is answered as an unknown tool; only the main agent's asks.
        pane.wait_for("The model asks you", WAIT);
        assert_eq!(mock.requests().len(), 4);
        pane.keys(&["Escape"]);
        pane.wait_for("declined to answer", WAIT);

        pane.wait_until(WAIT, "the second card", |_| mock.requests().len() == 5);
        pane.wait_for("The model asks you", WAIT);
        pane.keys(&["C-c"]);
        let shown = pane.wait_for("Interrupted", WAIT);
        assert!(!shown.contains("The model asks you"), "the card closed:\n{shown}");
        pane.type_text("are you there?");
        pane.keys(&["Enter"]);
        pane.wait_for("Still here.", WAIT);

        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("scenario");

    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    assert!(!offered_tools(&requests[1].body).contains(&"ask_user".to_string()));
    let unknown = result_block(&requests[2].body, "call_sub_ask");
    assert!(unknown["content"].to_string().contains("unknown tool `ask_user`"), "{unknown}");
    let declined = result_block(&requests[4].body, "call_declined");
    let text = declined["content"].to_string();
    assert!(text.contains("The user declined to answer. Decide yourself"), "{text}");
    let cancelled = result_block(&requests[5].body, "call_cancelled");
    assert_eq!(cancelled["is_error"], true);
    assert!(cancelled["content"].to_string().contains("interrupted"), "{cancelled}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_while_the_card_is_open_resumes_with_the_call_answered() {
    let setup = setup();
    let server = Arc::new(scripted(json!([ask("call_ask", &["PostgreSQL", "SQLite"])])).await);
    let script = pane_script(&setup, &server, &[]);
    let argv = lathe_argv(&server, &[]);
    let (dir, mark) = (setup.tmp.path().to_path_buf(), setup.mark.clone());
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("add a cache");
        pane.keys(&["Enter"]);
        pane.wait_for("The model asks you", WAIT);
        sigkill(&argv, &mark);
        pane.wait_for("lathe exited with status 137", WAIT);
    })
    .await
    .expect("scenario");
    let items = ledger_items(&setup.home);
    assert!(
        items.iter().any(|item| item["type"] == "assistant" && item.to_string().contains("\"call_ask\"")),
        "the call is in the session file: {items:?}"
    );
    assert!(
        !items.iter().any(|item| item["type"] == "tool_result"),
        "the call had no result when the session was killed: {items:?}"
    );

    let resumed = scripted(json!([{"text": "Going on with PostgreSQL."}])).await;
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command
        .args(["-p", "go on", "--continue", "--provider", "anthropic", "--base-url"])
        .arg(resumed.url())
        .arg("-C")
        .arg(&setup.workspace)
        .env("LATHE_HOME", &setup.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .stdin(Stdio::null());
    let out = support::output(command).await;
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Going on with PostgreSQL.\n");
    let requests = resumed.requests();
    assert_eq!(requests.len(), 1);
    let repaired = result_block(&requests[0].body, "call_ask");
    assert_eq!(repaired["is_error"], true);
    assert!(repaired["content"].to_string().contains("interrupted"), "{repaired}");
}
