//! Bad model files and grammars give clear errors, never an abort.

use futures::StreamExt;
use lathe_local::{LocalConfig, LocalProvider, gguf};
use lathe_protocol::{ModelEvent, ProviderError};
use tokio_util::sync::CancellationToken;

fn new_with(path: std::path::PathBuf) -> ProviderError {
    LocalProvider::new(LocalConfig { model_path: Some(path), ..LocalConfig::default() }).unwrap_err()
}

#[test]
fn a_missing_model_file_is_a_config_error_naming_the_fix() {
    let err = new_with("/nonexistent/dir/model.gguf".into());
    assert!(matches!(err, ProviderError::Config { .. }), "{err}");
    assert!(err.to_string().contains("not found") && err.to_string().contains("lathe model fetch"), "{err}");
}

#[test]
fn a_corrupt_file_is_rejected_before_llama_cpp_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.gguf");
    std::fs::write(&path, b"<html>404 not found</html>").unwrap();
    let err = new_with(path);
    assert!(err.to_string().contains("is not a valid GGUF model file: bad magic"), "{err}");
}

#[test]
fn a_truncated_real_model_header_is_rejected() {
    let real = std::fs::read(super::model_path()).map(|bytes| bytes[..4096].to_vec()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("truncated.gguf");
    std::fs::write(&path, real).unwrap();
    let err = new_with(path);
    assert!(err.to_string().contains("truncated"), "{err}");
}

#[test]
fn a_gguf_of_another_architecture_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llama.gguf");
    std::fs::write(&path, gguf::synthetic_header(3, &[("general.architecture", "llama")])).unwrap();
    let err = new_with(path);
    assert!(err.to_string().contains("is a `llama` model; the local provider supports Qwen2.5"), "{err}");
}

#[tokio::test]
async fn a_grammar_that_does_not_compile_is_an_error_event_and_the_provider_survives() {
    let _serial = super::serial().await;
    let provider = super::provider(lathe_local::AnswerMode::Text, 1024);
    let prompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n".to_string();
    let events: Vec<ModelEvent> = provider
        .stream_prompt(prompt.clone(), Some("root ::= [unclosed".into()), 8, CancellationToken::new())
        .collect()
        .await;
    let Some(ModelEvent::Error { error }) = events.last() else { panic!("{events:?}") };
    assert!(error.to_string().contains("grammar does not compile"), "{error}");
    // The provider still works afterwards.
    let events: Vec<ModelEvent> =
        provider.stream_prompt(prompt, None, 4, CancellationToken::new()).collect().await;
    assert!(matches!(events.last(), Some(ModelEvent::Stop { .. })), "{events:?}");
}
