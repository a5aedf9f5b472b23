//! The embedded local model: building its provider, and what `lathe model fetch|path` needs
//! (re-exported so front ends depend on `lathe-core` only).

use std::path::PathBuf;
use std::sync::Arc;

pub use lathe_local::{FetchError, ModelSize, default_model_path, fetch_model, models_dir};
use lathe_local::{LocalConfig, LocalProvider};
use lathe_provider::Provider;

use super::StartError;
use crate::config::ConfigLayer;

/// Builds the local provider from `[local]` config, the model name (a size, `0.5b`/`1.5b`) and the
/// model file; returns it and the model name.
pub(crate) fn provider(
    layer: &ConfigLayer,
    model_path: Option<PathBuf>,
) -> Result<(Arc<dyn Provider>, String), StartError> {
    let mut config = LocalConfig::default();
    if let Some(size) = layer.model.as_deref().and_then(|model| model.parse::<ModelSize>().ok()) {
        config.model_size = size;
    }
    config.model_path = model_path;
    if let Some(tokens) = layer.local.context_tokens {
        config.context_tokens = tokens;
    }
    if let Some(temperature) = layer.local.temperature {
        config.temperature = temperature;
    }
    config.threads = layer.local.threads.or(config.threads);
    if !lathe_local::INFERENCE_AVAILABLE {
        return Err(StartError::Usage(
            "this build of lathe has no local model support; rebuild with `cargo build --release --features local` \
             or choose --provider anthropic|openai|responses"
                .into(),
        ));
    }
    let path = config.resolved_model_path();
    if !path.is_file() {
        return Err(StartError::Usage(format!(
            "local model not found at {}; run `lathe model fetch {}` or pass --model-path FILE.gguf",
            path.display(),
            config.model_size.as_str()
        )));
    }
    let provider =
        LocalProvider::new(config).map_err(|error| StartError::Usage(format!("local model: {error}")))?;
    let name = provider.model_name().to_string();
    Ok((Arc::new(provider), name))
}
