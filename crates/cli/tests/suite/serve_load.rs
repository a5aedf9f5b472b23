//! `lathe serve` under a client that stops reading: the client is dropped once its queue is full,
//! the session and the other watchers go on (every event, in order), and the dropped client gets
//! exactly what it missed when it reconnects with the last sequence number it saw.

use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::{Value, json};

use super::serve::serve;
use super::serve_client::{Rpc, seq};
use super::support;

/// Chunks of the model's answer, the bytes in each and the pause between them: enough to fill a
/// stalled client's queue and both ends' socket buffers on loopback several times over, at a pace
/// the reading clients (in this test process, in a debug build) keep up with.
const CHUNKS: usize = 4_000;
const CHUNK_BYTES: usize = 4_000;
const CHUNK_DELAY_MS: u64 = 2;

/// The answer's text from the messages a client got after number `last`: (text, the last seq,
/// whether the turn ended).
fn read_text(messages: &[Value], mut last: u64) -> (String, u64, bool) {
    let mut text = String::new();
    let mut ended = false;
    for message in messages {
        if let Some(number) = seq(message) {
            assert_eq!(number, last + 1, "sequence numbers have no gap: {message}");
            last = number;
        }
        let update = &message["params"]["update"];
        if update["sessionUpdate"] == "agent_message_chunk" {
            text.push_str(update["content"]["text"].as_str().unwrap_or_default());
        }
        ended |= message["method"] == "_lathe/turn_end";
    }
    (text, last, ended)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_dropped_without_slowing_the_others_and_catches_up() {
    let env = support::env();
    let answer: String = (0..CHUNKS).map(|i| format!("{i:08}{}", "y".repeat(CHUNK_BYTES - 8))).collect();
    let mock =
        support::scripted(json!([{"text": answer, "text_chunks": CHUNKS, "chunk_delay_ms": CHUNK_DELAY_MS}]))
            .await;
    let served = serve(&env, &mock.url(), &[], &[]);
    let port = served.port;
    let workspace = env.workspace.display().to_string();
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});

    let mut steer = Rpc::connect(port, &served.steer).await;
    steer.call("initialize", init.clone()).await;
    let new = steer.call("session/new", json!({"cwd": workspace, "mcpServers": []})).await;
    let session = new["result"]["sessionId"].as_str().expect("session").to_string();
    let load = json!({"sessionId": session, "cwd": workspace, "mcpServers": []});
    let mut watchers = Vec::new();
    for _ in 0..8 {
        let mut watcher = Rpc::connect(port, &served.watch).await;
        watcher.call("initialize", init.clone()).await;
        watcher.call("session/load", load.clone()).await;
        watchers.push(watcher);
    }
    // This one attaches, then never reads again.
    let mut stalled = Rpc::connect(port, &served.watch).await;
    stalled.call("initialize", init.clone()).await;
    stalled.call("session/load", load.clone()).await;

    // The watchers read all the time, each on its own task.
    let reads: Vec<_> = watchers
        .into_iter()
        .map(|mut watcher| {
            tokio::spawn(async move {
                // Folded as it comes (16 MB per client), after what the load brought.
                let (mut text, mut last, _) = read_text(&watcher.seen, 0);
                loop {
                    let message = watcher.next().await;
                    let (chunk, number, ended) = read_text(std::slice::from_ref(&message), last);
                    last = number;
                    text.push_str(&chunk);
                    if ended {
                        return (text, last, true);
                    }
                }
            })
        })
        .collect();
    let started = Instant::now();
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "talk"}]});
    let response = steer.call("session/prompt", prompt).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let turn = started.elapsed();
    for read in join_all(reads).await {
        let (text, _, ended) = read.expect("reader");
        assert!(ended);
        assert_eq!(text.len(), answer.len());
        assert!(text == answer, "every watcher got every chunk, in order");
    }
    assert!(turn < Duration::from_secs(120), "the turn took {turn:?}");

    // The stalled client was dropped: its stream ends before the turn's end.
    let mut missed = stalled.seen.clone();
    while let Ok(Some(Ok(message))) =
        tokio::time::timeout(Duration::from_secs(20), futures::StreamExt::next(stalled.socket())).await
    {
        if let tokio_tungstenite::tungstenite::Message::Text(text) = message {
            missed.push(serde_json::from_str(text.as_str()).expect("json"));
        }
    }
    let (got, last, ended) = read_text(&missed, 0);
    assert!(
        !ended && got.len() < answer.len(),
        "the stalled client was dropped ({} of {} bytes)",
        got.len(),
        answer.len()
    );
    // Reconnected with the last number it saw, it gets exactly the rest.
    let mut again = Rpc::connect(port, &served.watch).await;
    again.call("initialize", init).await;
    let mut load = load;
    load["_meta"] = json!({"lathe": {"after": last}});
    // The replay comes before the answer.
    again.call("session/load", load).await;
    let rest: Vec<Value> = again.seen.clone();
    assert_eq!(rest.first().and_then(seq), Some(last + 1), "the replay starts right after");
    let mut all = missed;
    all.extend(rest);
    let (text, _, ended) = read_text(&all, 0);
    assert!(ended && text == answer, "nothing missed after the reconnect");
}
