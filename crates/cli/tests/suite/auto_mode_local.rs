//! Auto mode with the embedded model as the reviewer (`[auto_mode] reviewer_model = "local:0.5b"`):
//! the session's model is scripted, the reviews run in-process — none reaches the provider — and
//! every call that would ask is decided by them. Needs the `local` feature and the 0.5B model
//! (`lathe model fetch 0.5b`).

use serde_json::json;

use super::harness::{Env, output, serve, stderr, stdout, tool_results};

#[tokio::test]
async fn the_local_model_reviews_and_the_provider_sees_no_review_request() {
    let env = Env::new("[retry]\nmax_retries = 0\n[auto_mode]\nreviewer_model = \"local:0.5b\"\n");
    // A folder that does not exist: whatever the review decides, nothing is lost (the model file
    // is found under the real home, so `~` stays the real one here).
    let missing = format!("~/lathe-auto-mode-test-{}-missing", std::process::id());
    let server = serve(json!({"turns": [
        {"tool_calls": [{"id": "c1", "name": "shell", "arguments": {"command": format!("rm -rf {missing}")}}]},
        {"tool_calls": [{"id": "c2", "name": "shell", "arguments": {"command": "python3 -c 'print(6 * 7)'"}}]},
        {"text": "Done."},
    ]}))
    .await;
    let command = env.run_against(
        &server,
        "anthropic",
        "compute six times seven with python",
        &["--permission-mode", "auto", "--output-format", "stream-json"],
    );
    let out = output(command).await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stderr(&out), stdout(&out));
    let results = tool_results(&out);
    assert_eq!(results.len(), 2, "{}", stdout(&out));
    for result in &results {
        let decision = result["decision"].as_str().unwrap_or_default();
        assert!(decision.contains("(auto mode reviewer: "), "decided by the local reviewer: {result}");
    }
    assert_eq!(server.requests().len(), 3, "the session's three turns only");
    assert!(
        server.requests().iter().all(|request| !request.body.to_string().contains("[permission review]"))
    );
    let usage: Vec<_> =
        out.stdout.split(|b| *b == b'\n').filter(|line| line.starts_with(b"{\"type\":\"usage\"")).collect();
    assert!(usage.len() >= 4, "the reviews' usage is counted: {}", usage.len());
}
