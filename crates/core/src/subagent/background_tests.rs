use super::*;

fn info(id: &str) -> Running {
    Running { agent_id: id.into(), subagent_type: "general".into(), description: "look around".into() }
}

fn ended(status: &'static str, report: &str) -> Ended {
    let stats =
        RunStats { turns: 2, tool_calls: 1, input_tokens: 30, output_tokens: 7, ..RunStats::default() };
    Ended { status, report: report.into(), stats }
}

#[test]
fn an_end_is_notified_once_with_its_report_and_usage() {
    let table = BackgroundTable::default();
    table.insert(info("a"), CancellationToken::new()).unwrap_or_else(|e| panic!("{e}"));
    assert!(table.take_notifications().is_empty(), "nothing ended yet");
    assert_eq!(table.running(), vec![info("a")]);
    table.finish("a", ended("completed", "Found it in src/lib.rs."));
    assert!(table.running().is_empty());
    let notes = table.take_notifications();
    assert_eq!(notes.len(), 1);
    let text = &notes[0].text;
    assert!(text.starts_with("<task-notification>") && text.ends_with("</task-notification>"), "{text}");
    assert!(text.contains("id: a\n") && text.contains("status: completed"), "{text}");
    assert!(text.contains("2 model requests, 1 tool calls, 30 input tokens, 7 output tokens"), "{text}");
    assert!(text.contains("report:\nFound it in src/lib.rs.\n"), "{text}");
    assert!(table.take_notifications().is_empty(), "delivered once");
}

#[test]
fn output_shows_progress_while_running_then_the_report_and_an_unknown_id_is_an_error() {
    let table = BackgroundTable::default();
    let error = table.output("x").err().unwrap_or_default();
    assert!(error.contains("no background sub-agent has the id `x`") && error.contains("none was started"));
    table.insert(info("a"), CancellationToken::new()).unwrap_or_else(|e| panic!("{e}"));
    table.progress("a", true, Some("Reading the parser.".into()));
    table.progress("a", true, None);
    let running = table.output("a").unwrap_or_default();
    assert!(running.contains("still running; 2 tool calls so far"), "{running}");
    assert!(running.ends_with("Reading the parser."), "{running}");
    let error = table.output("b").err().unwrap_or_default();
    assert!(error.contains("the ids are: a"), "{error}");
    table.finish("a", ended("completed", "The parser is fine."));
    let done = table.output("a").unwrap_or_default();
    assert!(done.contains("completed; its report:\nThe parser is fine."), "{done}");
    let notes = table.take_notifications();
    assert!(notes[0].text.contains("(already read with task_output)"), "{}", notes[0].text);
    assert!(!notes[0].text.contains("The parser is fine."));
}

#[tokio::test]
async fn kill_cancels_waits_for_the_task_and_is_not_notified() {
    let table = std::sync::Arc::new(BackgroundTable::default());
    let cancel = CancellationToken::new();
    table.insert(info("a"), cancel.clone()).unwrap_or_else(|e| panic!("{e}"));
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let task_table = table.clone();
    let handle = tokio::spawn(async move {
        cancel.cancelled().await;
        task_table.finish("a", ended("killed", "(stopped)"));
        let _ = done_tx.send(());
    });
    table.attach("a", handle);
    let text = table.kill("a").await.unwrap_or_default();
    assert!(text.contains("a was stopped"), "{text}");
    assert!(done_rx.await.is_ok(), "the task ended before kill returned");
    assert!(table.take_notifications().is_empty());
    let again = table.kill("a").await.unwrap_or_default();
    assert!(again.contains("already ended (killed)"), "{again}");
    assert!(table.kill("zz").await.is_err());
}

#[tokio::test]
async fn the_session_end_stops_the_running_and_reports_the_undelivered() {
    let table = std::sync::Arc::new(BackgroundTable::default());
    let cancel = CancellationToken::new();
    table.insert(info("run"), cancel.clone()).unwrap_or_else(|e| panic!("{e}"));
    table.insert(info("done"), CancellationToken::new()).unwrap_or_else(|e| panic!("{e}"));
    let task_table = table.clone();
    table.attach(
        "run",
        tokio::spawn(async move {
            cancel.cancelled().await;
            task_table.finish("run", ended("killed", ""));
        }),
    );
    table.finish("done", ended("completed", "late"));
    let lost = table.end_all().await;
    assert_eq!(lost, vec![(info("run"), None), (info("done"), Some("completed"))]);
    assert!(table.take_notifications().is_empty(), "an end after the session is lost");
    let refused = table.insert(info("new"), CancellationToken::new()).err().unwrap_or_default();
    assert!(refused.contains("session is ending"), "{refused}");
}

#[test]
fn at_most_the_limit_run_at_once() {
    let table = BackgroundTable::default();
    for n in 0..MAX_BACKGROUND_SUBAGENTS {
        table.insert(info(&format!("a{n}")), CancellationToken::new()).unwrap_or_else(|e| panic!("{e}"));
    }
    let refused = table.insert(info("more"), CancellationToken::new()).err().unwrap_or_default();
    assert!(refused.contains("task_kill"), "{refused}");
    table.finish("a0", ended("completed", ""));
    assert!(table.insert(info("more"), CancellationToken::new()).is_ok());
}
