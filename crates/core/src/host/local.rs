//! The embedded local model: building its provider, and what `lathe model fetch|path` needs
//! (re-exported so front ends depend on `lathe-core` only).

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use lathe_local::{
    FetchError, FetchProgress, ModelSize, default_model_path, fetch_model, fetch_model_with_progress,
    models_dir,
};
use lathe_local::{LocalConfig, LocalProvider};
use lathe_provider::Provider;

use super::error::StartError;
use crate::config::ConfigLayer;

/// Builds the local provider from `[local]` config, the model name (a size, `0.5b`/`1.5b`) and the
/// model file; relative paths in the model's calls resolve against `workspace`. Returns the provider
/// and the model name.
///
/// # Errors
/// `StartError::Usage` for a model name that is not one of the pinned checkpoints (unless a model
/// file is given), a build without local support, or a missing or unloadable model file.
pub(crate) fn provider(
    layer: &ConfigLayer,
    model_path: Option<PathBuf>,
    workspace: &Path,
) -> Result<(Arc<dyn Provider>, String), StartError> {
    let mut config = LocalConfig::default();
    if let Some(model) = layer.model.as_deref() {
        match model.parse::<ModelSize>() {
            Ok(size) => config.model_size = size,
            // With a model file the name only labels it.
            Err(_) if model_path.is_some() => {}
            Err(error) => return Err(StartError::Usage(error.to_string())),
        }
    }
    config.model_path = model_path;
    config.workspace = Some(workspace.to_path_buf());
    if let Some(tokens) = layer.local.context_tokens {
        config.context_tokens = tokens;
    }
    if let Some(temperature) = layer.local.temperature {
        config.temperature = temperature;
    }
    config.threads = layer.local.threads.or(config.threads);
    config.answer_bias = layer.local.answer_bias.unwrap_or(config.model_size.default_answer_bias());
    config.max_calls_per_response =
        layer.local.max_calls_per_response.unwrap_or(config.max_calls_per_response);
    config.edit_grammar = layer.local.edit_grammar.unwrap_or(config.edit_grammar);
    config.restate_task = layer.local.restate_task.unwrap_or(config.restate_task);
    config.act_first = layer.local.act_first.unwrap_or(config.act_first);
    config.prompt_cache = layer.local.prompt_cache.unwrap_or(config.prompt_cache);
    config.prompt_cache_dir = layer.local.prompt_cache_dir.clone().or(config.prompt_cache_dir);
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
