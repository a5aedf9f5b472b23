//! The prompt cache on disk: the system turn's KV state saved by one provider is loaded by the
//! next (two model loads, like two `lathe` processes), and a damaged or misnamed cache file is
//! ignored.

use std::path::{Path, PathBuf};

use lathe_local::{AnswerMode, LocalConfig, LocalProvider, LocalStats, ModelSize};
use lathe_protocol::{LedgerItem, ModelEvent, ModelRequest, SystemBlock, Usage, UserMessage};

use super::{builtin_tools, run};

/// Tokens of the request's user turn and the generation start, at most (the rest is the system
/// turn): `<|im_end|>\n<|im_start|>user\n` + the question + `<|im_end|>\n<|im_start|>assistant\n`.
const USER_TURN_TOKENS: u64 = 40;

fn provider(cache_dir: &Path) -> LocalProvider {
    LocalProvider::new(LocalConfig {
        model_path: Some(super::model_path()),
        context_tokens: 2048,
        answer_mode: AnswerMode::default(),
        answer_bias: ModelSize::Q05B.default_answer_bias(),
        prompt_cache: true,
        prompt_cache_dir: Some(cache_dir.to_path_buf()),
        ..LocalConfig::default()
    })
    .unwrap()
}

const SYSTEM: &str = "You are Lathe, a coding agent in the user's project. Make one tool call at a time.";

fn request(system: &str) -> ModelRequest {
    ModelRequest {
        model: "local".into(),
        system: vec![SystemBlock { text: system.into(), cache_breakpoint: true }],
        messages: vec![LedgerItem::User(UserMessage::text("What is the first line of notes.txt?"))],
        tools: builtin_tools(),
        max_output_tokens: 48,
        temperature: Some(0.0),
        ..ModelRequest::default()
    }
}

/// One request on a newly loaded provider: what it answered (text and calls, as JSON for
/// comparison), its figures and its usage event.
async fn first_request(cache_dir: &Path, system: &str) -> (String, LocalStats, Usage) {
    let provider = provider(cache_dir);
    let (events, message) = run(&provider, &request(system)).await;
    assert!(matches!(events.last(), Some(ModelEvent::Stop { .. })), "the request fails: {events:?}");
    let usage = events
        .iter()
        .find_map(|event| match event {
            ModelEvent::Usage(usage) => Some(*usage),
            _ => None,
        })
        .expect("a usage event");
    let calls: Vec<_> =
        message.tool_calls().map(|call| (call.name.clone(), call.arguments.clone())).collect();
    let answer = serde_json::json!({"text": message.text(), "calls": calls}).to_string();
    (answer, provider.stats(), usage)
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[tokio::test]
async fn a_second_process_loads_the_system_turn_from_disk_and_ignores_a_damaged_file() {
    let _serial = super::serial().await;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("prompt-cache");

    // The first process evaluates everything and saves the system turn.
    let (first, one, usage) = first_request(&dir, SYSTEM).await;
    assert_eq!(one.reused_tokens, 0, "{one:?}");
    assert_eq!(usage.cache_read_input_tokens, Some(0));
    let files = cache_files(&dir);
    assert_eq!(files.len(), 1, "one file for the system turn: {files:?}");
    assert_eq!(files[0].extension().unwrap(), "kv");
    let size = std::fs::metadata(&files[0]).unwrap().len();
    assert!(size > 1_000_000, "the saved state is only {size} bytes");

    // The second process loads it: only the user turn is evaluated, and the answer is the same.
    let (second, two, usage) = first_request(&dir, SYSTEM).await;
    assert_eq!(two.prompt_tokens, one.prompt_tokens);
    assert!(
        two.reused_tokens >= one.prompt_tokens - USER_TURN_TOKENS && two.reused_tokens < two.prompt_tokens,
        "reused {} of {} prompt tokens",
        two.reused_tokens,
        two.prompt_tokens
    );
    assert_eq!(two.prompt_eval_tokens, two.prompt_tokens - two.reused_tokens);
    assert_eq!(usage.cache_read_input_tokens, Some(two.reused_tokens));
    assert_eq!(usage.input_tokens, Some(two.prompt_tokens));
    assert_eq!(second, first, "greedy output after loading the prefix from disk");
    assert_eq!(cache_files(&dir), files, "no second file for the same prefix");

    // A truncated file (its header still valid) is ignored, and saved again whole.
    let bytes = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &bytes[..bytes.len() / 2]).unwrap();
    let (third, three, _) = first_request(&dir, SYSTEM).await;
    assert_eq!(three.reused_tokens, 0, "{three:?}");
    assert_eq!(third, first);
    assert_eq!(std::fs::metadata(&files[0]).unwrap().len(), size, "the damaged file is replaced");

    // Another system turn gets its own file.
    let _ = first_request(&dir, "You are Lathe, a coding agent. Make one tool call at a time.").await;
    let both = cache_files(&dir);
    assert_eq!(both.len(), 2, "{both:?}");
    let other = both.iter().find(|file| **file != files[0]).unwrap();
    // A whole, sealed file under the wrong name: its tokens are not the prefix, so it is ignored.
    std::fs::copy(other, &files[0]).unwrap();
    let (fourth, four, _) = first_request(&dir, SYSTEM).await;
    assert_eq!(four.reused_tokens, 0, "{four:?}");
    assert_eq!(fourth, first);
}

#[tokio::test]
async fn an_unwritable_cache_directory_only_costs_the_saving() {
    let _serial = super::serial().await;
    let tmp = tempfile::tempdir().unwrap();
    // A file where the directory should be: nothing can be created in it.
    let dir = tmp.path().join("prompt-cache");
    std::fs::write(&dir, b"a file").unwrap();
    let (_, one, _) = first_request(&dir, SYSTEM).await;
    assert_eq!(one.reused_tokens, 0);
    assert_eq!(std::fs::read(&dir).unwrap(), b"a file");
}
