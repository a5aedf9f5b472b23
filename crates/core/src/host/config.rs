//! One typed configuration from the layers (STYLE.md "Configuration is typed"): built-in defaults
//! → `<home>/config.toml` → `<project>/.lathe/config.toml` (restricted, see
//! [`ConfigLayer::untrusted`]) → environment (`LATHE_PROVIDER`, `LATHE_MODEL`,
//! `LATHE_PERMISSION_MODE`, `MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT`) → the front end's [`Flags`], merged
//! as data and deserialised once ([`ConfigLayer::merged`]). Then the provider is resolved from it:
//! a built-in protocol name, a `[providers.NAME]` entry, or the embedded local model.
//!
//! Every failure here is a [`StartError`] reported before anything on disk is touched.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lathe_policy::PermissionMode;
use lathe_provider::{Protocol, Provider, ProviderConfig, RetryConfig};

use super::error::StartError;
use super::flags::Flags;
use super::local;
use crate::agent::AgentSettings;
use crate::config::ConfigLayer;
use crate::guards::DEFAULT_MAX_CALLS_PER_RESPONSE;
use crate::paths;
use crate::profile::{Backend, ModelProfile};

/// Model requests per user turn when nothing says otherwise.
pub const DEFAULT_MAX_TURNS: u32 = 50;
/// Smallest `context_window` accepted, in tokens.
pub const MIN_CONTEXT_WINDOW: u32 = 1_024;
/// Output-token limit per response when nothing says otherwise.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8192;

/// The resolved configuration of one session.
#[derive(Debug, Clone)]
pub struct Config {
    /// Workspace root (canonical).
    pub workspace: PathBuf,
    /// Lathe's home (`$LATHE_HOME` or `~/.lathe`).
    pub home: PathBuf,
    /// This workspace's session folder.
    pub sessions_dir: PathBuf,
    /// Provider name as configured (`anthropic`, `local`, a `[providers.NAME]` key).
    pub provider: String,
    /// Permission mode.
    pub permission_mode: PermissionMode,
    /// Model requests per user turn.
    pub max_turns: u32,
    /// Tool calls of one response that run (0 = unlimited); `None` = the provider's suggestion,
    /// else [`DEFAULT_MAX_CALLS_PER_RESPONSE`].
    pub max_calls_per_response: Option<u32>,
    /// Cost budget in US dollars; `None` = unlimited.
    pub max_cost_usd: Option<f64>,
    /// Output-token limit per response.
    pub max_output_tokens: u32,
    /// Default `shell` timeout in milliseconds, when configured.
    pub shell_timeout_ms: Option<u64>,
    /// GGUF file for the local provider (`--model-path` over `[local] model_path`).
    pub model_path: Option<PathBuf>,
    /// The merged layers, for resolving another provider or model later.
    pub layer: ConfigLayer,
    /// Warnings about the configuration (a project file's settings that were ignored).
    pub warnings: Vec<String>,
}

/// A provider ready to use, with what the loop needs to know about its model.
pub struct ResolvedProvider {
    /// The provider.
    pub provider: Arc<dyn Provider>,
    /// The model requests name.
    pub model: String,
    /// The provider's label (`anthropic`, `openai`, `responses`, `local`), as sessions record it.
    pub label: String,
    /// The provider name it was resolved from (a built-in or a `[providers.NAME]` key).
    pub name: String,
    /// What the model can do and costs, resolved once from the catalog and the configuration.
    pub profile: ModelProfile,
}

impl Config {
    /// Resolves the layers for `flags` with Lathe's home at `home`.
    pub fn resolve(flags: &Flags, home: &Path) -> Result<Config, StartError> {
        let workspace = workspace(flags.dir.as_deref())?;
        let (files, warnings) = ConfigLayer::from_files(home, &workspace)?;
        let windows = files
            .providers
            .iter()
            .filter_map(|(name, entry)| Some((format!("providers.{name}."), entry.context_window?)));
        for (prefix, window) in windows.chain(files.context_window.map(|window| (String::new(), window))) {
            if window < MIN_CONTEXT_WINDOW {
                return Err(StartError::Usage(format!(
                    "{prefix}context_window = {window} is too small: at least {MIN_CONTEXT_WINDOW} tokens"
                )));
            }
        }
        let env = ConfigLayer::from_env()
            .map_err(|error| StartError::Usage(format!("LATHE_PERMISSION_MODE: {error}")))?;
        let layer = ConfigLayer::merged([files, env, flags_layer(flags)?])?;
        Ok(Config {
            sessions_dir: paths::sessions_dir(home, &workspace),
            workspace,
            home: home.to_path_buf(),
            provider: layer.provider.clone().unwrap_or_else(|| default_provider().to_string()),
            permission_mode: layer.permission_mode.unwrap_or_default(),
            max_turns: layer.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
            max_calls_per_response: layer.max_calls_per_response,
            max_cost_usd: layer.max_cost_usd,
            max_output_tokens: layer.max_output_tokens.unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS),
            shell_timeout_ms: layer.shell_timeout_ms,
            model_path: flags.model_path.clone().or_else(|| layer.local.model_path.clone()),
            layer,
            warnings,
        })
    }

    /// Builds the configured provider (`provider` and `model` override the configured ones, for a
    /// model switch).
    pub fn build_provider(
        &self,
        provider: Option<&str>,
        model: Option<&str>,
    ) -> Result<ResolvedProvider, StartError> {
        let name = provider.unwrap_or(&self.provider);
        let mut layer = self.layer.clone();
        if let Some(model) = model {
            layer.model = Some(model.to_string());
        }
        if provider.is_some_and(|provider| provider != self.provider) {
            // A base URL given for the configured provider does not carry over to another one.
            layer.base_url = None;
        }
        match resolve_http(name, &layer)? {
            None => {
                let (provider, model) = local::provider(&layer, self.model_path.clone(), &self.workspace)?;
                Ok(self.resolved(provider, model, name, Backend::Local))
            }
            Some(config) => {
                let backend = Backend::Http(config.protocol);
                let model = config.model.clone();
                let provider = lathe_provider::build_provider(&config)
                    .map_err(|error| StartError::Usage(format!("provider `{name}`: {error}")))?;
                Ok(self.resolved(provider, model, name, backend))
            }
        }
    }

    /// `provider`, built for `backend` from the provider name `name`, serving `model`, with its
    /// [`ModelProfile`]: the catalog's entry for `model`, the backend's cache accounting, pricing,
    /// reasoning format and tool set, the context window of [`Config::context_window`] and the
    /// provider's suggested cap on calls per response.
    pub fn resolved(
        &self,
        provider: Arc<dyn Provider>,
        model: String,
        name: &str,
        backend: Backend,
    ) -> ResolvedProvider {
        let profile = ModelProfile::new(&model, backend)
            .with_context_window(self.context_window(name, backend, &model))
            .with_max_calls_per_response(provider.max_calls_per_response());
        ResolvedProvider {
            label: provider.name().to_string(),
            provider,
            model,
            name: name.to_string(),
            profile,
        }
    }

    /// The context window in tokens of `model` served by the provider named `name` on `backend`:
    /// the provider entry's `context_window`, else the top-level one, else (local model) its
    /// configured context size, else the catalog's.
    pub fn context_window(&self, name: &str, backend: Backend, model: &str) -> u32 {
        let entry = self.layer.providers.get(name).and_then(|entry| entry.context_window);
        match entry.or(self.layer.context_window) {
            Some(window) => window,
            None if backend == Backend::Local => {
                self.layer.local.context_tokens.unwrap_or(lathe_local::LocalConfig::default().context_tokens)
            }
            None => lathe_provider::catalog::lookup(model).context_window,
        }
    }

    /// The loop's settings for `resolved`.
    pub fn agent_settings(&self, resolved: &ResolvedProvider) -> AgentSettings {
        let profile = &resolved.profile;
        AgentSettings {
            model: resolved.model.clone(),
            max_turns: self.max_turns,
            max_calls_per_response: self
                .max_calls_per_response
                .or(profile.max_calls_per_response)
                .unwrap_or(DEFAULT_MAX_CALLS_PER_RESPONSE),
            max_cost_usd: self.max_cost_usd,
            max_output_tokens: self.max_output_tokens,
            permission_mode: self.permission_mode,
            temperature: None,
            prompt_caching: true,
            model_info: profile.info.clone(),
            thinking_format: profile.thinking_format,
            context: crate::context::ContextSettings {
                auto_compact: self.layer.auto_compact.unwrap_or(true),
                pruning: self.layer.context_pruning.unwrap_or(true),
            },
        }
    }
}

/// The provider used when none is configured: the embedded local model when this build has it.
pub fn default_provider() -> &'static str {
    if cfg!(feature = "local") { "local" } else { "anthropic" }
}

/// The canonical workspace for `-C dir` (or the current directory).
pub fn workspace(dir: Option<&Path>) -> Result<PathBuf, StartError> {
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|error| StartError::Usage(format!("cannot read the current directory: {error}")))?,
    };
    if !dir.is_dir() {
        return Err(StartError::Usage(format!("-C {}: no such directory", dir.display())));
    }
    dir.canonicalize().map_err(|error| StartError::Usage(format!("-C {}: {error}", dir.display())))
}

fn flags_layer(flags: &Flags) -> Result<ConfigLayer, StartError> {
    if let (true, Some(mode)) = (flags.yolo, &flags.permission_mode)
        && mode.parse::<PermissionMode>() != Ok(PermissionMode::Bypass)
    {
        return Err(StartError::Usage(format!(
            "--yolo is --permission-mode bypass; it cannot be combined with --permission-mode {mode}"
        )));
    }
    let permission_mode = if flags.yolo {
        Some(PermissionMode::Bypass)
    } else {
        match &flags.permission_mode {
            Some(mode) => {
                Some(mode.parse::<PermissionMode>().map_err(|error| StartError::Usage(error.to_string()))?)
            }
            None => None,
        }
    };
    if flags.max_turns == Some(0) {
        return Err(StartError::Usage("--max-turns must be at least 1".into()));
    }
    if let Some(cost) = flags.max_cost_usd
        && (cost.is_nan() || cost <= 0.0)
    {
        return Err(StartError::Usage("--max-cost must be a positive number of US dollars".into()));
    }
    let sandbox = match &flags.sandbox {
        Some(mode) => Some(mode.parse().map_err(|error: lathe_policy::sandbox::UnknownSandboxMode| {
            StartError::Usage(format!("--sandbox: {error}"))
        })?),
        None => None,
    };
    let memory = match &flags.memory {
        Some(mode) => Some(mode.parse().map_err(|error: crate::memory::session::UnknownMemoryMode| {
            StartError::Usage(format!("--memory: {error}"))
        })?),
        None => None,
    };
    Ok(ConfigLayer {
        sandbox: crate::config::SandboxEntry { mode: sandbox, network: None },
        memory: crate::config::MemoryEntry { mode: memory },
        provider: flags.provider.clone(),
        model: flags.model.clone(),
        base_url: flags.base_url.clone(),
        permission_mode,
        max_turns: flags.max_turns,
        max_calls_per_response: flags.max_calls_per_response,
        max_cost_usd: flags.max_cost_usd,
        auto_compact: flags.no_auto_compact.then_some(false),
        ..ConfigLayer::default()
    })
}

/// The HTTP provider config for `name`, or `None` for the local model.
fn resolve_http(name: &str, layer: &ConfigLayer) -> Result<Option<ProviderConfig>, StartError> {
    let entry = layer.providers.get(name).cloned().unwrap_or_default();
    let protocol_name = entry.protocol.clone().unwrap_or_else(|| name.to_string());
    let protocol = match Protocol::from_name(&protocol_name) {
        Some(protocol) => protocol,
        None if protocol_name == "local" => return Ok(None),
        None => {
            let other = protocol_name.as_str();
            let mut known = vec!["anthropic", "openai", "responses", "local"];
            known.extend(layer.providers.keys().map(String::as_str));
            return Err(StartError::Usage(if layer.providers.contains_key(name) {
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
        initial_delay_ms: layer.retry.initial_delay_ms.unwrap_or(retry_defaults.initial_delay_ms),
        max_delay_ms: layer.retry.max_delay_ms.unwrap_or(retry_defaults.max_delay_ms),
        ..retry_defaults
    };
    Ok(Some(ProviderConfig {
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

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
