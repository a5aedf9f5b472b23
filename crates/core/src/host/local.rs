//! The embedded local model: building its provider, its first message in a session (environment,
//! repository state, the workspace's files), and what `lathe model fetch|path` needs (re-exported
//! so front ends depend on `lathe-core` only).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lathe_local::LocalConfig;
#[cfg(not(feature = "local"))]
use lathe_local::LocalProvider as ChildProvider;
#[cfg(feature = "local")]
use lathe_local::child::ChildProvider;
/// The model process's loop, for the `lathe-local-model` executable (builds with local support).
#[cfg(feature = "local")]
pub use lathe_local::child::serve as serve_model_process;
pub use lathe_local::{
    FetchError, FetchProgress, ModelSize, default_model_path, fetch_model, fetch_model_with_progress,
    models_dir,
};
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
    // The model runs in a process of its own (`lathe-local-model`), so that this one links no
    // llama.cpp (see `lathe_local::child`).
    #[cfg(not(feature = "local"))]
    let provider =
        ChildProvider::new(config).map_err(|error| StartError::Usage(format!("local model: {error}")))?;
    #[cfg(feature = "local")]
    let provider =
        ChildProvider::spawn(config).map_err(|error| StartError::Usage(format!("local model: {error}")))?;
    let name = provider.model_name().to_string();
    Ok((Arc::new(provider), name))
}

/// The local model's first message in a new session: the environment and project instructions
/// (the second system block) without the day's date (greedy decoding would follow it: no task of
/// a small model needs it), then the repository state (`git`, may be empty), each block separated
/// by one blank line. (The workspace's path is written relative by the provider.)
pub(crate) fn session_context(environment: &str, git: &str) -> String {
    let environment: Vec<&str> =
        environment.split_inclusive('\n').filter(|line| !line.starts_with("Today's date:")).collect();
    let mut text = environment.concat().trim_end().to_string();
    if !git.trim().is_empty() {
        text.push_str("\n\n");
        text.push_str(git.trim_end());
    }
    text
}

/// The local model's tool set, in place: a small model in a small window gets the short set (MCP
/// tools and skills the user configured stay) and the stricter forms of `shell`, `write_file` and
/// `edit_file`.
pub(crate) fn small_tool_set(tools: &mut lathe_tools::ToolRegistry, ctx: &lathe_tools::ToolContext) {
    tools.retain(|name| !crate::prompt::LOCAL_DROPPED_TOOLS.contains(&name));
    // Without shell_output and shell_kill it could not follow a background job: its shell has no
    // run_in_background (and its system turn stays as it was).
    if tools.get("shell").is_some() {
        let shell = lathe_tools::builtin::Shell::in_sandbox(ctx.sandbox.as_deref());
        tools.register(Arc::new(lathe_tools::builtin::ForegroundShell(shell)));
    }
    // It rewrote whole files to change a line and dropped code on the way: write_file only creates
    // files, changes go through edit_file.
    if tools.get("write_file").is_some() {
        tools.register(Arc::new(lathe_tools::builtin::CreateFile));
    }
    // It glued a function body onto a docstring's line and called the bug fixed, and undid a rename
    // it had been told to finish: such edits are refused, the file unchanged.
    if tools.get("edit_file").is_some() {
        tools.register(Arc::new(lathe_tools::builtin::EditFile::strict()));
    }
}

/// Characters of the workspace listing the local model gets at most.
const LISTING_CHARS: usize = 1500;

/// The workspace's files for the local model's first message (two levels, gitignore-aware, as
/// `list_dir` shows them; cut to [`LISTING_CHARS`]); `None` when listing fails.
pub(crate) async fn listing(
    tools: &lathe_tools::ToolRegistry,
    ctx: &lathe_tools::ToolContext,
) -> Option<String> {
    let list_dir = tools.get("list_dir")?;
    let output = list_dir.call(serde_json::json!({"path": ".", "depth": 2}), ctx).await.ok()?;
    if output.is_error {
        return None;
    }
    let text = output.text_content();
    let mut listing: String = text.chars().take(LISTING_CHARS).collect();
    if listing.len() < text.len() {
        listing.push_str("\n…");
    }
    Some(format!("\n\nFiles in the workspace:\n{}\n", listing.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_first_message_reads_environment_then_repository_state() {
        let environment = "# Environment\nWorking directory: /p\nToday's date: 2026-12-06\n\n# Project instructions\nRun the tests.\n";
        let git = "# Repository state at the start of this session\nGit branch: main\n";
        assert_eq!(
            session_context(environment, git),
            "# Environment\nWorking directory: /p\n\n# Project instructions\nRun the tests.\n\n\
             # Repository state at the start of this session\nGit branch: main"
        );
        assert_eq!(
            session_context(environment, ""),
            "# Environment\nWorking directory: /p\n\n# Project instructions\nRun the tests."
        );
    }
}
