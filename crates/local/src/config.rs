//! Configuration of the local provider and where model files live.
//!
//! [`LocalConfig`] is deserialised from the `[local]` table of Lathe's TOML config (every field
//! has a default) and passed to [`crate::LocalProvider::new`]. [`ModelSize`] names the two pinned
//! Qwen2.5-Coder checkpoints the fetcher knows; [`default_model_path`] is where the fetcher stores
//! them and where the provider looks when no path is configured.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Environment variable that overrides Lathe's cache directory (models go in `<dir>/models/`).
pub const CACHE_DIR_ENV: &str = "LATHE_CACHE_DIR";

/// One of the pinned Qwen2.5-Coder-Instruct GGUF checkpoints (Q4_K_M quantisation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum ModelSize {
    /// Qwen2.5-Coder-0.5B-Instruct, 491 400 064 bytes: about twice as fast, but it fails nearly
    /// every task of the former twelve-task bench (it repeats calls until the loop guards stop it).
    #[serde(rename = "0.5b")]
    Q05B,
    /// Qwen2.5-Coder-1.5B-Instruct, 1 117 320 768 bytes: the default, chosen on the task suite
    /// (README, "The local model").
    #[default]
    #[serde(rename = "1.5b")]
    Q15B,
}

impl ModelSize {
    /// Both sizes, smallest first.
    pub const ALL: [ModelSize; 2] = [ModelSize::Q05B, ModelSize::Q15B];

    /// The short name users type: `0.5b` or `1.5b`.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelSize::Q05B => "0.5b",
            ModelSize::Q15B => "1.5b",
        }
    }

    /// The GGUF file name (the official Qwen release name).
    pub fn file_name(self) -> &'static str {
        match self {
            ModelSize::Q05B => "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            ModelSize::Q15B => "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        }
    }

    /// The default of [`LocalConfig::answer_bias`] for this model: 1.5 for the 0.5B, which
    /// without it re-reads the file it was asked about until the loop guards stop it; 0 for the
    /// 1.5B, which with it answers right after reading a file it was asked to change (both
    /// measured with the former twelve-task bench).
    pub fn default_answer_bias(self) -> f32 {
        match self {
            ModelSize::Q05B => 1.5,
            ModelSize::Q15B => 0.0,
        }
    }

    /// The model name reported in `ModelEvent::Started` and the ledger.
    pub fn model_name(self) -> &'static str {
        match self {
            ModelSize::Q05B => "qwen2.5-coder-0.5b-instruct",
            ModelSize::Q15B => "qwen2.5-coder-1.5b-instruct",
        }
    }
}

impl fmt::Display for ModelSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error of [`ModelSize::from_str`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown local model `{0}`: the known ones are `0.5b` (qwen2.5-coder-0.5b-instruct) and `1.5b` (qwen2.5-coder-1.5b-instruct); another GGUF file is used with --model-path FILE"
)]
pub struct UnknownModelSize(pub String);

impl FromStr for ModelSize {
    type Err = UnknownModelSize;

    /// Accepts `0.5b`, `0.5B`, `0.5`, `1.5b`, `1.5B`, `1.5`, and each model's full name
    /// (`qwen2.5-coder-0.5b-instruct`) or GGUF file name with or without `.gguf` (what a session
    /// records as its model).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let name = text.trim().to_ascii_lowercase();
        match name.as_str() {
            "0.5b" | "0.5" | "05b" => return Ok(ModelSize::Q05B),
            "1.5b" | "1.5" | "15b" => return Ok(ModelSize::Q15B),
            _ => {}
        }
        ModelSize::ALL
            .into_iter()
            .find(|size| {
                name == size.model_name()
                    || name == size.file_name()
                    || Some(name.as_str()) == size.file_name().strip_suffix(".gguf")
            })
            .ok_or_else(|| UnknownModelSize(text.to_string()))
    }
}

/// How the model ends a turn with an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerMode {
    /// The grammar allows either tool calls or plain text; plain text ends the turn.
    Text,
    /// Every turn is a forced tool call; a synthetic `answer` tool carries the answer, which
    /// the provider streams as plain text and reports as `end_turn`. Small models choose tools more
    /// reliably this way (see `shared/local-model/README.md`).
    #[default]
    FinalAnswerTool,
    /// A forced call (`answer` included) while the model has not seen a tool result yet, so
    /// it acts instead of guessing; after a tool result, plain text or calls, so it can answer in
    /// its own words (small models keep calling tools when every turn must be a call). Text
    /// answers are rendered as text in later prompts.
    Auto,
    /// Every turn must be a call to one of the request's tools (like `tool_choice: required`); the
    /// model cannot answer in text. For probes, benchmarks and tests of the grammar.
    ToolRequired,
}

/// Settings of the local provider. Every field has a default, so `LocalConfig::default()` runs
/// the 1.5B model from the cache directory with greedy decoding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocalConfig {
    /// The GGUF file; `None` means [`default_model_path`] of [`LocalConfig::model_size`].
    pub model_path: Option<PathBuf>,
    /// Which pinned checkpoint to use when `model_path` is `None`.
    pub model_size: ModelSize,
    /// Context window in tokens (KV-cache size). Default 8192.
    pub context_tokens: u32,
    /// CPU threads for generation and prompt processing; `None` uses every core for prompt
    /// processing and all but one for generation (robust when another process is busy).
    pub threads: Option<u32>,
    /// Sampling temperature; `0` is greedy decoding (deterministic). A request's own temperature
    /// overrides it.
    pub temperature: f32,
    /// Nucleus sampling probability mass (used when `temperature > 0`); `1.0` disables it.
    pub top_p: f32,
    /// Seed of the random sampler (used when `temperature > 0`).
    pub seed: u32,
    /// Upper bound of generated tokens per response; a request's smaller limit wins.
    pub max_output_tokens: u32,
    /// How the model answers in text (see [`AnswerMode`]).
    pub answer_mode: AnswerMode,
    /// Logits added to the `answer` tool when the model picks a tool name right after a tool
    /// result (a prior towards answering). Default 0, the 1.5B's
    /// ([`ModelSize::default_answer_bias`]): with a prior of 1.5 it answered right after reading
    /// the file it was asked to change, claiming a change it never made.
    pub answer_bias: f32,
    /// Tool calls the grammar allows in one response (`0` = any number). Default 1: a small
    /// model that sees each result before its next call does not pile up dozens of blind writes.
    pub max_calls_per_response: u32,
    /// Until the model has seen a tool result in a user turn, its response must be a real tool
    /// call, not the `answer` tool: small models otherwise "answer" tasks they have not done
    /// (claiming a fix they never made). Default on.
    pub act_first: bool,
    /// A user message that is a question (ends with `?`, names no change) gets no file-changing
    /// tool: a small model otherwise edits files to make its answer true. Default on.
    pub questions_read_only: bool,
    /// A question's system prompt ends with a worked example of answering from a file
    /// ([`crate::chatml::QUESTION_EXAMPLE`]), and its answer's thought starts by citing a line
    /// of the tool results ([`crate::grammar::Shape::cite_line`]). The system turn of a question
    /// then differs from a change's: in a session that switches between the two, the request
    /// after a switch evaluates its whole prompt again. Default on.
    pub question_example: bool,
    /// Offer tools with their required parameters only ([`crate::chatml::lean_tools`]):
    /// a shorter prompt, and no optional parameter filled with a wrong guess. Default on.
    pub lean_schemas: bool,
    /// End every turn of tool results with the user's latest message again ("The task: …"), so
    /// the model reads what was asked right before it decides. Default off: on the 1.5B it passed
    /// as many tasks of the former twelve-task bench with it as without (7 of 12), at more tokens.
    pub restate_task: bool,
    /// Constrain `edit_file` to edits that apply to the files the model has read (see
    /// `grammar::edit`). Default on.
    pub edit_grammar: bool,
    /// Keep the KV state of the system turn (the core prompt and the tools block, ~1 200 tokens,
    /// identical in every run of a change, and in every run of a question) on disk, so a new
    /// process loads it instead of evaluating it again
    /// (the 1.5B's system turn is 1 197 tokens, 15 s on 2 cores). Default on. Files take tens of MB
    /// each (34 MB for the 1.5B's system turn, 28 KiB per token); at most 8 are kept.
    pub prompt_cache: bool,
    /// Directory of the prompt cache files; `None` = [`default_prompt_cache_dir`]
    /// (`<cache_dir>/models/prompt-cache`).
    pub prompt_cache_dir: Option<PathBuf>,
    /// The workspace relative paths in calls resolve against, and that paths in what the model
    /// reads are written relative to (set by the host, not configured; sent to the model process
    /// with the rest); `None` = the process's current directory.
    pub workspace: Option<PathBuf>,
}

impl Default for LocalConfig {
    fn default() -> Self {
        LocalConfig {
            model_path: None,
            model_size: ModelSize::Q15B,
            context_tokens: 8192,
            threads: None,
            temperature: 0.0,
            top_p: 1.0,
            seed: 0x1a7e,
            max_output_tokens: 2048,
            answer_mode: AnswerMode::default(),
            answer_bias: 0.0,
            max_calls_per_response: 1,
            act_first: true,
            lean_schemas: true,
            questions_read_only: true,
            question_example: true,
            edit_grammar: true,
            restate_task: false,
            prompt_cache: true,
            prompt_cache_dir: None,
            workspace: None,
        }
    }
}

impl LocalConfig {
    /// The model file this configuration points at: `model_path`, or the default path of
    /// `model_size`.
    pub fn resolved_model_path(&self) -> PathBuf {
        match &self.model_path {
            Some(path) => path.clone(),
            None => default_model_path(self.model_size),
        }
    }

    /// Where the prompt cache lives: `None` when [`LocalConfig::prompt_cache`] is off, else
    /// `prompt_cache_dir` or [`default_prompt_cache_dir`].
    pub fn resolved_prompt_cache_dir(&self) -> Option<PathBuf> {
        self.prompt_cache.then(|| self.prompt_cache_dir.clone().unwrap_or_else(default_prompt_cache_dir))
    }
}

/// Lathe's cache directory: `$LATHE_CACHE_DIR`, else the platform cache dir + `lathe`
/// (`~/.cache/lathe` on Linux), else `.lathe-cache` in the current directory.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir);
    }
    match dirs::cache_dir() {
        Some(dir) => dir.join("lathe"),
        None => PathBuf::from(".lathe-cache"),
    }
}

/// Directory the fetcher stores models in: `<cache_dir>/models`.
pub fn models_dir() -> PathBuf {
    cache_dir().join("models")
}

/// The default directory of the prompt cache (the system turn's KV state, see
/// [`LocalConfig::prompt_cache`]): `<cache_dir>/models/prompt-cache`.
pub fn default_prompt_cache_dir() -> PathBuf {
    models_dir().join("prompt-cache")
}

/// Where the model of `size` is stored: `<cache_dir>/models/<official file name>`.
pub fn default_model_path(size: ModelSize) -> PathBuf {
    models_dir().join(size.file_name())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn model_size_parses_user_spellings_and_rejects_others() {
        assert_eq!("0.5b".parse::<ModelSize>(), Ok(ModelSize::Q05B));
        assert_eq!("1.5B".parse::<ModelSize>(), Ok(ModelSize::Q15B));
        let err = "7b".parse::<ModelSize>().unwrap_err();
        assert!(err.to_string().contains("the known ones are `0.5b`"), "{err}");
        assert_eq!("qwen2.5-coder-1.5b-instruct-q4_k_m".parse::<ModelSize>(), Ok(ModelSize::Q15B));
        assert_eq!("qwen2.5-coder-0.5b-instruct".parse::<ModelSize>(), Ok(ModelSize::Q05B));
    }

    #[test]
    fn config_deserialises_with_defaults_and_rejects_unknown_keys() {
        let config: LocalConfig = serde_json::from_str(r#"{"threads": 2, "model_size": "1.5b"}"#).unwrap();
        assert_eq!(config.threads, Some(2));
        assert_eq!(config.model_size, ModelSize::Q15B);
        assert_eq!(config.context_tokens, 8192);
        assert_eq!(config.temperature, 0.0);
        assert!(serde_json::from_str::<LocalConfig>(r#"{"context": 1}"#).is_err());
    }

    #[test]
    fn default_model_path_ends_with_the_official_file_name() {
        let path = default_model_path(ModelSize::Q05B);
        assert!(path.ends_with("models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"), "{}", path.display());
    }
}
