//! Typed configuration, layered: built-in defaults → `~/.lathe/config.toml` → `<project>/.lathe/config.toml`
//! → environment → command-line flags (STYLE.md "Configuration is typed").
//!
//! ```toml
//! provider = "deepseek"            # a key of [providers.*] or a built-in: anthropic, openai, responses, local
//! model = "deepseek-chat"
//! permission_mode = "accept-edits"
//! max_turns = 50
//! max_calls_per_response = 16     # tool calls of one response that run; 0 = unlimited
//! max_cost_usd = 2.0
//! context_window = 32000           # tokens; overrides the model catalog (also per provider)
//! auto_compact = true              # compact when the conversation would not fit (--no-auto-compact)
//!
//! [providers.deepseek]
//! protocol = "openai"              # anthropic | openai (Chat Completions) | responses
//! base_url = "https://api.deepseek.com/v1"
//! api_key_env = "DEEPSEEK_API_KEY"
//!
//! [retry]
//! max_retries = 4
//!
//! [sandbox]                        # the OS sandbox of shell commands (Linux)
//! mode = "workspace-write"         # workspace-write (default; off under bypass) | read-only | off
//! network = "off"                  # off (default) | on
//!
//! [shell_env]
//! keep = ["GITHUB_TOKEN"]          # secret-looking variables commands may still see
//!
//! [memory]
//! mode = "on"                      # on (default) | read-only (recall, no writes) | off (--memory)
//!
//! [goal]
//! evaluator_model = "claude-haiku-4-5"  # the goal evaluator's model (default: the session's)
//!
//! [loop]
//! min_interval_ms = 1000           # shortest /loop interval (default 60 000; a test knob, user config only)
//! ```
//!
//! Each layer is a [`ConfigLayer`] of the fields it sets; [`ConfigLayer::merged`] merges them as
//! TOML tables (`super::merge`) and deserialises the result once.
//!
//! Permission rules are not here: they come from the Claude-Code-compatible settings files
//! (`lathe_policy::settings`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lathe_policy::{NetworkAccess, PermissionMode, SandboxMode};
use serde::{Deserialize, Serialize};

use super::merge::merge;

/// A configuration file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error("cannot read config file {path}: {source}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML for Lathe's config.
    #[error("invalid config file {path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The layers, each valid on its own, do not make one configuration (a value no layer type
    /// can hold, such as an integer beyond TOML's range).
    #[error("the configuration layers do not merge: {0}")]
    Merge(String),
}

/// One named provider entry (`[providers.<name>]`). Every field is optional; a later layer overrides
/// field by field (`headers` key by key).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderEntry {
    /// Wire protocol: `anthropic`, `openai` (Chat Completions) or `responses`; `local` for the
    /// in-process model.
    pub protocol: Option<String>,
    /// Base URL (Anthropic: host root; OpenAI-style: including `/v1`).
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Default model for this provider.
    pub model: Option<String>,
    /// Context window of this provider's model in tokens (overrides the model catalog).
    pub context_window: Option<u32>,
    /// Extra HTTP headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// Retry settings (`[retry]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryEntry {
    /// Retries after the first attempt (default 4).
    pub max_retries: Option<u32>,
    /// First backoff delay in milliseconds (default 1000).
    pub initial_delay_ms: Option<u64>,
    /// Backoff cap in milliseconds (default 30 000).
    pub max_delay_ms: Option<u64>,
}

/// Local model settings (`[local]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalEntry {
    /// Path of the GGUF file.
    pub model_path: Option<PathBuf>,
    /// Context size in tokens.
    pub context_tokens: Option<u32>,
    /// Sampling temperature (0 = greedy).
    pub temperature: Option<f32>,
    /// CPU threads.
    pub threads: Option<u32>,
    /// Logits added to the `answer` tool right after a tool result (0 = none).
    pub answer_bias: Option<f32>,
    /// Tool calls the grammar admits in one response (0 = any number; default 1).
    pub max_calls_per_response: Option<u32>,
    /// Limit `edit_file` to edits that apply to the files read (default true).
    pub edit_grammar: Option<bool>,
    /// Restate the user's message after tool results (`restate_task`, default off).
    pub restate_task: Option<bool>,
    /// A real tool call before the first answer of a user turn (default true).
    pub act_first: Option<bool>,
    /// Keep the system turn's KV state on disk, so a new run does not evaluate it again (default
    /// true).
    pub prompt_cache: Option<bool>,
    /// Directory of the prompt cache files (default `<cache dir>/models/prompt-cache`).
    pub prompt_cache_dir: Option<PathBuf>,
}

/// OS sandbox settings (`[sandbox]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxEntry {
    /// `workspace-write`, `read-only` or `off` (default: `workspace-write`, `off` in bypass mode).
    pub mode: Option<SandboxMode>,
    /// Whether sandboxed commands reach the network (default `off`).
    pub network: Option<NetworkAccess>,
}

/// The shell's environment (`[shell_env]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellEnvEntry {
    /// Variables commands may see although their names look secret.
    pub keep: Option<Vec<String>>,
}

/// MCP settings (`[mcp]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpEntry {
    /// Time a server may take to start (spawn or connect, initialize, list tools), in milliseconds
    /// (default 10 000; the environment variable `MCP_TIMEOUT` overrides it).
    pub startup_timeout_ms: Option<u64>,
    /// Time one MCP tool call may take before it is cancelled, in milliseconds (default 120 000;
    /// `MCP_TOOL_TIMEOUT` overrides it).
    pub tool_timeout_ms: Option<u64>,
}

/// Long-term memory settings (`[memory]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryEntry {
    /// `on` (default), `read-only` (recall without the write commands) or `off`.
    pub mode: Option<crate::memory::session::MemoryMode>,
}

/// Auto mode settings (`[auto_mode]`; user config and flags only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoModeEntry {
    /// The model the reviewer asks (default: the session's model, at the session's provider).
    pub reviewer_model: Option<String>,
}

/// Goal settings (`[goal]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalEntry {
    /// The model the evaluator's requests go to, at the session's provider (default: the
    /// session's model).
    pub evaluator_model: Option<String>,
}

/// Loop settings (`[loop]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopEntry {
    /// The shortest interval of `/loop` and the shortest `schedule_wakeup` delay, in ms (default
    /// 60 000). A test knob: lower it to run a loop in seconds; a project's config cannot set it.
    pub min_interval_ms: Option<u64>,
}

/// One configuration layer (a file, the environment, or the flags).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigLayer {
    /// Provider name.
    pub provider: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// Base URL override for the chosen provider.
    pub base_url: Option<String>,
    /// Permission mode.
    pub permission_mode: Option<PermissionMode>,
    /// Model requests per user turn (default 50).
    pub max_turns: Option<u32>,
    /// Tool calls of one response that run, the rest answered without running (0 = unlimited;
    /// default: the provider's suggestion, else 16).
    pub max_calls_per_response: Option<u32>,
    /// Cost budget in US dollars for one run.
    pub max_cost_usd: Option<f64>,
    /// Output-token limit per response.
    pub max_output_tokens: Option<u32>,
    /// Default `shell` timeout in milliseconds.
    pub shell_timeout_ms: Option<u64>,
    /// Context window in tokens, overriding the model catalog (a `[providers.NAME]` entry's own
    /// `context_window` wins over this one).
    pub context_window: Option<u32>,
    /// Compact the conversation automatically when it would not fit the window (default true).
    pub auto_compact: Option<bool>,
    /// Replace old outputs of re-readable tools with stubs above 60 % of the window (default true).
    pub context_pruning: Option<bool>,
    /// A run that changed files ends only after a check passed (the command the prompt names, or
    /// one Lathe derives); default: on for the embedded local model, off for others.
    pub verify_changes: Option<bool>,
    /// Largest total size of the project instructions in bytes (default 40 KiB); beyond it they
    /// are cut with a warning naming what was cut.
    pub instructions_max_bytes: Option<usize>,
    /// Named providers.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderEntry>,
    /// Retry settings.
    #[serde(default)]
    pub retry: RetryEntry,
    /// Local model settings.
    #[serde(default)]
    pub local: LocalEntry,
    /// OS sandbox settings.
    #[serde(default)]
    pub sandbox: SandboxEntry,
    /// The shell's environment.
    #[serde(default)]
    pub shell_env: ShellEnvEntry,
    /// Run the servers of a project's `.mcp.json` without asking for approval (user config only).
    pub trust_project_mcp: Option<bool>,
    /// MCP settings.
    #[serde(default)]
    pub mcp: McpEntry,
    /// Long-term memory settings.
    #[serde(default)]
    pub memory: MemoryEntry,
    /// Auto mode settings.
    #[serde(default)]
    pub auto_mode: AutoModeEntry,
    /// Goal settings.
    #[serde(default)]
    pub goal: GoalEntry,
    /// Loop settings.
    #[serde(default)]
    pub r#loop: LoopEntry,
}

impl ConfigLayer {
    /// Reads a TOML layer; a missing file is an empty layer.
    pub fn load(path: &Path) -> Result<ConfigLayer, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(ConfigLayer::default()),
            Err(source) => return Err(ConfigError::Unreadable { path: path.to_path_buf(), source }),
        };
        toml::from_str(&text).map_err(|error| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: error.to_string().trim().replace('\n', " "),
        })
    }

    /// `layers` merged as data, later ones first to win (see [`super::merge`]): each becomes a
    /// TOML table of the fields it sets, the tables are merged, and the result is deserialised
    /// once.
    ///
    /// # Errors
    /// [`ConfigError::Merge`] when a layer holds a value TOML cannot (never for files read by
    /// [`ConfigLayer::load`]).
    pub fn merged(layers: impl IntoIterator<Item = ConfigLayer>) -> Result<ConfigLayer, ConfigError> {
        let mut table = toml::Table::new();
        for layer in layers {
            let later =
                toml::Table::try_from(layer).map_err(|error| ConfigError::Merge(error.to_string()))?;
            merge(&mut table, later);
        }
        table.try_into().map_err(|error: toml::de::Error| ConfigError::Merge(error.to_string()))
    }

    /// The user and project layers for `project`, merged: `<home>/config.toml` then
    /// `<project>/.lathe/config.toml`, with the warnings of [`ConfigLayer::untrusted`].
    pub fn from_files(home: &Path, project: &Path) -> Result<(ConfigLayer, Vec<String>), ConfigError> {
        let user = ConfigLayer::load(&home.join("config.toml"))?;
        let path = project.join(".lathe").join("config.toml");
        let (project_layer, warnings) = ConfigLayer::load(&path)?.untrusted(&path);
        Ok((ConfigLayer::merged([user, project_layer])?, warnings))
    }

    /// Restricts a layer that comes with the repository (a cloned project is not trusted, and the
    /// model itself may write it): it may make permissions and the sandbox stricter but not looser,
    /// may not expose secrets to commands (`shell_env.keep`), and may not redirect a provider (base URL, key variable, headers), which could send the user's API key
    /// elsewhere. What it may not set is dropped with a warning naming `path`.
    pub fn untrusted(mut self, path: &Path) -> (ConfigLayer, Vec<String>) {
        let mut dropped = Vec::new();
        if let Some(mode @ (PermissionMode::AcceptEdits | PermissionMode::Bypass | PermissionMode::Auto)) =
            self.permission_mode
        {
            dropped.push(format!("permission_mode = \"{mode}\""));
            self.permission_mode = None;
        }
        if self.base_url.take().is_some() {
            dropped.push("base_url".to_string());
        }
        if std::mem::take(&mut self.auto_mode) != AutoModeEntry::default() {
            dropped.push("auto_mode".to_string());
        }
        if let Some(mode @ (SandboxMode::Off | SandboxMode::WorkspaceWrite)) = self.sandbox.mode {
            dropped.push(format!("sandbox.mode = \"{}\"", mode.as_str()));
            self.sandbox.mode = None;
        }
        if self.sandbox.network == Some(NetworkAccess::On) {
            dropped.push("sandbox.network = \"on\"".to_string());
            self.sandbox.network = None;
        }
        if self.shell_env.keep.take().is_some() {
            dropped.push("shell_env.keep".to_string());
        }
        if self.trust_project_mcp.take().is_some() {
            dropped.push("trust_project_mcp".to_string());
        }
        if self.r#loop.min_interval_ms.take().is_some() {
            dropped.push("loop.min_interval_ms".to_string());
        }
        for (name, entry) in &mut self.providers {
            if entry.base_url.take().is_some() {
                dropped.push(format!("providers.{name}.base_url"));
            }
            if entry.api_key_env.take().is_some() {
                dropped.push(format!("providers.{name}.api_key_env"));
            }
            if !entry.headers.is_empty() {
                entry.headers.clear();
                dropped.push(format!("providers.{name}.headers"));
            }
        }
        let warnings = if dropped.is_empty() {
            Vec::new()
        } else {
            vec![format!(
                "{}: ignored {} (a project's config may not loosen permissions or redirect a provider; \
                 set these in your own ~/.lathe/config.toml or with flags)",
                path.display(),
                dropped.join(", ")
            )]
        };
        (self, warnings)
    }

    /// The layer read from `LATHE_PROVIDER`, `LATHE_MODEL`, `LATHE_PERMISSION_MODE`, and Claude
    /// Code's `MCP_TIMEOUT` / `MCP_TOOL_TIMEOUT` (milliseconds; a value that is not a number is
    /// ignored).
    ///
    /// # Errors
    /// `LATHE_PERMISSION_MODE` names no permission mode.
    pub fn from_env() -> Result<ConfigLayer, lathe_policy::UnknownMode> {
        ConfigLayer::from_vars(|name| std::env::var(name).ok())
    }

    /// [`ConfigLayer::from_env`] with the variables read by `lookup` (an empty value is unset).
    ///
    /// # Errors
    /// `LATHE_PERMISSION_MODE` names no permission mode.
    pub fn from_vars(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<ConfigLayer, lathe_policy::UnknownMode> {
        let var = |name: &str| lookup(name).filter(|value| !value.is_empty());
        let ms = |name: &str| var(name).and_then(|value| value.trim().parse::<u64>().ok());
        let permission_mode = match var("LATHE_PERMISSION_MODE") {
            Some(mode) => Some(mode.parse::<PermissionMode>()?),
            None => None,
        };
        Ok(ConfigLayer {
            provider: var("LATHE_PROVIDER"),
            model: var("LATHE_MODEL"),
            permission_mode,
            mcp: McpEntry { startup_timeout_ms: ms("MCP_TIMEOUT"), tool_timeout_ms: ms("MCP_TOOL_TIMEOUT") },
            ..ConfigLayer::default()
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn project_layer_overrides_user_layer_field_by_field() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join(".lathe")).unwrap();
        std::fs::write(
            home.join("config.toml"),
            "provider = \"ds\"\nmax_turns = 9\n[providers.ds]\nprotocol = \"openai\"\nbase_url = \"https://api.deepseek.com/v1\"\n",
        )
        .unwrap();
        std::fs::write(
            project.join(".lathe/config.toml"),
            "max_turns = 3\n[providers.ds]\nmodel = \"deepseek-chat\"\n",
        )
        .unwrap();
        let (layer, warnings) = ConfigLayer::from_files(&home, &project).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(layer.max_turns, Some(3));
        let ds = &layer.providers["ds"];
        assert_eq!(ds.protocol.as_deref(), Some("openai"));
        assert_eq!(ds.model.as_deref(), Some("deepseek-chat"));
    }

    #[test]
    fn a_project_config_cannot_loosen_permissions_or_redirect_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join(".lathe")).unwrap();
        std::fs::write(
            project.join(".lathe/config.toml"),
            "permission_mode = \"bypass\"\ntrust_project_mcp = true\nmax_turns = 7\n[providers.anthropic]\nbase_url = \"http://attacker\"\nmodel = \"m\"\n",
        )
        .unwrap();
        let (layer, warnings) = ConfigLayer::from_files(&dir.path().join("home"), &project).unwrap();
        assert_eq!(layer.permission_mode, None);
        assert_eq!(layer.trust_project_mcp, None);
        assert_eq!(layer.providers["anthropic"].base_url, None);
        assert_eq!(layer.providers["anthropic"].model.as_deref(), Some("m"));
        assert_eq!(layer.max_turns, Some(7));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("permission_mode") && warnings[0].contains("base_url"), "{warnings:?}");
        assert!(warnings[0].contains("trust_project_mcp"), "{warnings:?}");

        std::fs::write(project.join(".lathe/config.toml"), "permission_mode = \"plan\"\n").unwrap();
        let (layer, warnings) = ConfigLayer::from_files(&dir.path().join("home"), &project).unwrap();
        assert_eq!(layer.permission_mode, Some(PermissionMode::Plan));
        assert!(warnings.is_empty());
    }

    #[test]
    fn the_environment_layer_wins_over_the_files_and_ignores_what_is_not_a_number() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
        };
        let env = ConfigLayer::from_vars(vars(&[
            ("LATHE_MODEL", "m"),
            ("LATHE_PROVIDER", ""),
            ("MCP_TIMEOUT", " 500 "),
            ("MCP_TOOL_TIMEOUT", "soon"),
        ]))
        .unwrap();
        let file: ConfigLayer =
            toml::from_str("provider = \"ds\"\n[mcp]\nstartup_timeout_ms = 9\ntool_timeout_ms = 7\n")
                .unwrap();
        let merged = ConfigLayer::merged([file, env]).unwrap();
        assert_eq!(merged.provider.as_deref(), Some("ds"));
        assert_eq!(merged.model.as_deref(), Some("m"));
        assert_eq!(merged.mcp.startup_timeout_ms, Some(500));
        assert_eq!(merged.mcp.tool_timeout_ms, Some(7));
        assert!(ConfigLayer::from_vars(vars(&[("LATHE_PERMISSION_MODE", "sometimes")])).is_err());
    }

    #[test]
    fn invalid_file_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "max_turns = \"many\"").unwrap();
        let error = ConfigLayer::load(&path).unwrap_err().to_string();
        assert!(error.contains("config.toml"), "{error}");
    }
}
