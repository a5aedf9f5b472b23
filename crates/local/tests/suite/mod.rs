//! Model-backed tests (feature `llama`).

mod bad_input;
mod edits;
mod grammar;
mod prompt_cache;
mod session;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use futures::StreamExt;
use lathe_local::{AnswerMode, LocalConfig, LocalProvider, ModelSize};
use lathe_protocol::{Accumulator, AssistantMessage, ModelEvent, ModelRequest, ThinkingFormat, ToolSpec};
use lathe_provider::Provider;
use tokio_util::sync::CancellationToken;

/// The 0.5B model file; panics with instructions when it is missing.
pub fn model_path() -> PathBuf {
    let path = match std::env::var_os("LATHE_LOCAL_MODEL").filter(|p| !p.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => lathe_local::default_model_path(ModelSize::Q05B),
    };
    assert!(
        path.is_file(),
        "the `llama` feature is on but the 0.5B model is missing at {}: run \
         `cargo run -p lathe-local --example fetch -- 0.5b` (or set LATHE_LOCAL_MODEL to a GGUF file)",
        path.display()
    );
    path
}

/// Model tests run one at a time: each uses every core.
pub async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

/// A fresh provider (own KV cache, no prompt cache on disk) on the 0.5B model with a small
/// context.
pub fn provider(mode: AnswerMode, context_tokens: u32) -> LocalProvider {
    let config = LocalConfig {
        model_path: Some(model_path()),
        context_tokens,
        answer_mode: mode,
        answer_bias: ModelSize::Q05B.default_answer_bias(),
        prompt_cache: false,
        ..LocalConfig::default()
    };
    LocalProvider::new(config).unwrap()
}

/// One provider shared by the tests of a module (loading is cheap but not free).
pub fn shared(cell: &'static OnceLock<Arc<LocalProvider>>, mode: AnswerMode) -> Arc<LocalProvider> {
    Arc::clone(cell.get_or_init(|| Arc::new(provider(mode, 4096))))
}

/// The built-in tools' specs, as the agent sends them.
pub fn builtin_tools() -> Vec<ToolSpec> {
    let specs = lathe_tools::ToolRegistry::builtin().specs();
    assert!(!specs.is_empty(), "lathe-tools registers no built-in tool");
    specs
}

/// Streams `request` and returns the events and the folded message.
pub async fn run(provider: &dyn Provider, request: &ModelRequest) -> (Vec<ModelEvent>, AssistantMessage) {
    let events: Vec<ModelEvent> = provider.stream(request, CancellationToken::new()).collect().await;
    (events.clone(), fold(&events))
}

pub fn fold(events: &[ModelEvent]) -> AssistantMessage {
    let mut accumulator = Accumulator::new(ThinkingFormat::Local);
    for event in events {
        accumulator.push(event);
    }
    accumulator.finish("local")
}
