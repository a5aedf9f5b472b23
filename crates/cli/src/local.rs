//! The embedded local model: provider construction and `lathe model fetch|path`.

use std::sync::Arc;

use lathe_core::config::ConfigLayer;
use lathe_local::{LocalConfig, LocalProvider, ModelSize};
use lathe_provider::Provider;

use crate::args::{Cli, EXIT_FAILED, EXIT_OK, EXIT_USAGE, ModelAction};
use crate::setup::SetupError;

/// Builds the local provider from `[local]` config and `--model-path`; returns it and the model name.
pub fn provider(layer: &ConfigLayer, cli: &Cli) -> Result<(Arc<dyn Provider>, String), SetupError> {
    let mut config = LocalConfig::default();
    if let Some(size) = layer.model.as_deref().and_then(|model| model.parse::<ModelSize>().ok()) {
        config.model_size = size;
    }
    config.model_path = cli.model_path.clone().or_else(|| layer.local.model_path.clone());
    if let Some(tokens) = layer.local.context_tokens {
        config.context_tokens = tokens;
    }
    if let Some(temperature) = layer.local.temperature {
        config.temperature = temperature;
    }
    config.threads = layer.local.threads.or(config.threads);
    if !lathe_local::INFERENCE_AVAILABLE {
        return Err(SetupError::Usage(
            "this build of lathe has no local model support; rebuild with `cargo build --release --features local` \
             or choose --provider anthropic|openai|responses"
                .into(),
        ));
    }
    let path = config.resolved_model_path();
    if !path.is_file() {
        return Err(SetupError::Usage(format!(
            "local model not found at {}; run `lathe model fetch {}` or pass --model-path FILE.gguf",
            path.display(),
            config.model_size.as_str()
        )));
    }
    let provider =
        LocalProvider::new(config).map_err(|error| SetupError::Usage(format!("local model: {error}")))?;
    let name = provider.model_name().to_string();
    Ok((Arc::new(provider), name))
}

/// Runs `lathe model …`.
pub async fn model_command(action: &ModelAction) -> u8 {
    let size = match action {
        ModelAction::Fetch { size } | ModelAction::Path { size } => size,
    };
    let size: ModelSize = match size.parse() {
        Ok(size) => size,
        Err(error) => {
            eprintln!("lathe: error: {error}");
            return EXIT_USAGE;
        }
    };
    match action {
        ModelAction::Path { .. } => {
            println!("{}", lathe_local::default_model_path(size).display());
            EXIT_OK
        }
        ModelAction::Fetch { .. } => {
            let dest = lathe_local::models_dir();
            eprintln!("lathe: fetching {} into {} …", size.file_name(), dest.display());
            match tokio::task::spawn_blocking(move || lathe_local::fetch_model(size, &dest)).await {
                Ok(Ok(path)) => {
                    println!("{}", path.display());
                    EXIT_OK
                }
                Ok(Err(error)) => {
                    eprintln!("lathe: error: {error}");
                    EXIT_FAILED
                }
                Err(error) => {
                    eprintln!("lathe: error: the download task failed: {error}");
                    EXIT_FAILED
                }
            }
        }
    }
}
