//! Turns flags, environment and config files into a ready [`Agent`]: resolves the provider and model,
//! opens (or resumes) the session file, assembles the system prompt and the tool context.
//!
//! Every failure here is a usage or configuration error ([`SetupError`]) reported in one line before
//! anything on disk is touched.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lathe_core::config::{ConfigError, ConfigLayer};
use lathe_core::session::{self, SessionWriter};
use lathe_core::{Agent, AgentSettings, paths, prompt};
use lathe_policy::PermissionMode;
use lathe_protocol::{LedgerItem, Meta, ThinkingFormat};
use lathe_provider::catalog::{self, ModelInfo, Price};
use lathe_provider::{Protocol, Provider, ProviderConfig, RetryConfig};
use lathe_tools::{ToolContext, ToolRegistry};

use crate::args::Cli;

/// A problem the user must fix before Lathe can run.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// Bad flag value, missing directory, unknown provider.
    #[error("{0}")]
    Usage(String),
    /// A config file is unreadable or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The session file cannot be created or written.
    #[error("{0}")]
    Session(String),
}

/// Everything the front end needs to run.
pub struct Prepared {
    /// The agent, with its ledger (empty or resumed).
    pub agent: Agent,
    /// Session id.
    pub session_id: String,
    /// Provider name.
    pub provider: String,
    /// Model name.
    pub model: String,
    /// Workspace root.
    pub cwd: PathBuf,
    /// Warnings to show (torn session lines, cut instructions).
    pub warnings: Vec<String>,
}

/// What a provider name resolves to.
enum Resolved {
    Http(ProviderConfig),
    Local,
}

/// Builds the agent for `cli`.
pub async fn prepare(cli: &Cli) -> Result<Prepared, SetupError> {
    let cwd = workspace(cli.dir.as_deref())?;
    let home = paths::lathe_home();
    let (mut layer, config_warnings) = ConfigLayer::from_files(&home, &cwd)?;
    let env = ConfigLayer::from_env()
        .map_err(|error| SetupError::Usage(format!("LATHE_PERMISSION_MODE: {error}")))?;
    layer.overlay(&env);
    layer.overlay(&flags_layer(cli)?);

    let provider_name = layer.provider.clone().unwrap_or_else(|| default_provider().to_string());
    let resolved = resolve_provider(&provider_name, &layer)?;
    let (provider, model, thinking_format, model_info): (
        Arc<dyn Provider>,
        String,
        ThinkingFormat,
        ModelInfo,
    ) = match resolved {
        Resolved::Http(config) => {
            let mut info = catalog::lookup(&config.model);
            // How usage is reported depends on the wire protocol, not on the model.
            info.input_includes_cache_reads = config.protocol != Protocol::Anthropic;
            let format = config.protocol.thinking_format();
            let model = config.model.clone();
            let provider = lathe_provider::build_provider(&config)
                .map_err(|error| SetupError::Usage(format!("provider `{provider_name}`: {error}")))?;
            (provider, model, format, info)
        }
        Resolved::Local => {
            let (provider, model) = crate::local::provider(&layer, cli)?;
            let mut info = catalog::lookup(&model);
            info.price = Price::default();
            (provider, model, ThinkingFormat::Local, info)
        }
    };

    let mode = layer.permission_mode.unwrap_or_default();
    let settings = AgentSettings {
        model: model.clone(),
        max_turns: layer.max_turns.unwrap_or(50),
        max_cost_usd: layer.max_cost_usd,
        max_output_tokens: layer.max_output_tokens.unwrap_or(8192),
        permission_mode: mode,
        temperature: None,
        prompt_caching: true,
        model_info,
        thinking_format,
    };

    let sessions = paths::sessions_dir(&home, &cwd);
    let mut warnings = config_warnings;
    let (session_id, ledger) = if cli.continue_session || cli.resume.is_some() {
        let path = match &cli.resume {
            Some(id) => sessions.join(format!("{id}.jsonl")),
            None => session::latest(&sessions).map_err(|error| SetupError::Usage(error.to_string()))?,
        };
        if !path.is_file() {
            return Err(SetupError::Usage(format!("no session {} for {}", path.display(), cwd.display())));
        }
        let loaded = session::load(&path).map_err(|error| SetupError::Usage(error.to_string()))?;
        warnings.extend(loaded.warnings.iter().map(|w| format!("session {}: {w}", loaded.id)));
        (loaded.id, loaded.items)
    } else {
        (uuid::Uuid::now_v7().to_string(), Vec::new())
    };
    let writer = SessionWriter::open(&sessions, &session_id)
        .map_err(|error| SetupError::Session(error.to_string()))?;

    tracing::debug!("provider and session file ready");
    let (system, prompt_warnings) = prompt::system_blocks(&cwd, &home).await;
    tracing::debug!("system prompt ready");
    warnings.extend(prompt_warnings);

    let mut ctx = ToolContext::new(cwd.clone());
    ctx.spill_dir = home.join("tool-results");
    if let Some(timeout) = layer.shell_timeout_ms {
        ctx.shell_default_timeout_ms = timeout;
    }
    let tools = ToolRegistry::builtin();
    let mut agent = Agent::new(provider.clone(), tools, ctx, system, ledger, Some(writer), settings);
    let provider_label = provider.name().to_string();
    let last_model = agent.ledger().iter().rev().find_map(|item| match item {
        LedgerItem::Meta(
            Meta::SessionStart { model, provider, .. } | Meta::ModelSwitch { model, provider },
        ) => Some((model.clone(), provider.clone())),
        _ => None,
    });
    let start = if agent.ledger().is_empty() {
        Some(Meta::SessionStart {
            session_id: session_id.clone(),
            cwd: cwd.display().to_string(),
            model: model.clone(),
            provider: provider_label.clone(),
            time_ms: now_ms(),
        })
    } else if last_model != Some((model.clone(), provider_label.clone())) {
        Some(Meta::ModelSwitch { model: model.clone(), provider: provider_label.clone() })
    } else {
        None
    };
    if let Some(meta) = start {
        agent.append(LedgerItem::Meta(meta)).map_err(|error| SetupError::Session(error.to_string()))?;
    }
    agent
        .repair_pairing("the previous run ended before this call completed")
        .map_err(|e| SetupError::Session(e.to_string()))?;
    Ok(Prepared { agent, session_id, provider: provider_label, model, cwd, warnings })
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The provider used when none is configured: the embedded local model when this build has it.
pub fn default_provider() -> &'static str {
    if cfg!(feature = "local") { "local" } else { "anthropic" }
}

fn workspace(dir: Option<&Path>) -> Result<PathBuf, SetupError> {
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|error| SetupError::Usage(format!("cannot read the current directory: {error}")))?,
    };
    if !dir.is_dir() {
        return Err(SetupError::Usage(format!("-C {}: no such directory", dir.display())));
    }
    dir.canonicalize().map_err(|error| SetupError::Usage(format!("-C {}: {error}", dir.display())))
}

fn flags_layer(cli: &Cli) -> Result<ConfigLayer, SetupError> {
    let permission_mode = if cli.yolo {
        Some(PermissionMode::Bypass)
    } else {
        match &cli.permission_mode {
            Some(mode) => {
                Some(mode.parse::<PermissionMode>().map_err(|error| SetupError::Usage(error.to_string()))?)
            }
            None => None,
        }
    };
    if let Some(turns) = cli.max_turns
        && turns == 0
    {
        return Err(SetupError::Usage("--max-turns must be at least 1".into()));
    }
    if let Some(cost) = cli.max_cost
        && (cost.is_nan() || cost <= 0.0)
    {
        return Err(SetupError::Usage("--max-cost must be a positive number of US dollars".into()));
    }
    Ok(ConfigLayer {
        provider: cli.provider.clone(),
        model: cli.model.clone(),
        base_url: cli.base_url.clone(),
        permission_mode,
        max_turns: cli.max_turns,
        max_cost_usd: cli.max_cost,
        ..ConfigLayer::default()
    })
}

fn resolve_provider(name: &str, layer: &ConfigLayer) -> Result<Resolved, SetupError> {
    let entry = layer.providers.get(name).cloned().unwrap_or_default();
    let protocol_name = entry.protocol.clone().unwrap_or_else(|| name.to_string());
    let protocol = match protocol_name.as_str() {
        "anthropic" => Protocol::Anthropic,
        "openai" | "openai-chat" | "chat" => Protocol::OpenAiChat,
        "responses" | "openai-responses" => Protocol::OpenAiResponses,
        "local" => return Ok(Resolved::Local),
        other => {
            let mut known = vec!["anthropic", "openai", "responses", "local"];
            known.extend(layer.providers.keys().map(String::as_str));
            return Err(SetupError::Usage(if layer.providers.contains_key(name) {
                format!(
                    "provider `{name}` has unknown protocol `{other}` (expected anthropic, openai or responses)"
                )
            } else {
                format!("unknown provider `{name}` (known: {})", known.join(", "))
            }));
        }
    };
    let model =
        layer.model.clone().or(entry.model.clone()).unwrap_or_else(|| default_model(protocol).to_string());
    let retry_defaults = RetryConfig::default();
    let retry = RetryConfig {
        max_retries: layer.retry.max_retries.unwrap_or(retry_defaults.max_retries),
        initial_backoff_ms: layer.retry.initial_delay_ms.unwrap_or(retry_defaults.initial_backoff_ms),
        max_backoff_ms: layer.retry.max_delay_ms.unwrap_or(retry_defaults.max_backoff_ms),
        ..retry_defaults
    };
    Ok(Resolved::Http(ProviderConfig {
        protocol,
        base_url: layer.base_url.clone().or(entry.base_url),
        api_key_env: entry.api_key_env,
        headers: entry.headers,
        model,
        retry,
        ..ProviderConfig::default()
    }))
}

fn default_model(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Anthropic => "claude-sonnet-4-5",
        Protocol::OpenAiChat | Protocol::OpenAiResponses => "gpt-4.1",
    }
}
