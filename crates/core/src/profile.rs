//! What Lathe knows about the model of a session, as data: a [`ModelProfile`] resolved once in the
//! host (`crate::host::Config::build_provider`) from the model catalog
//! (`lathe_provider::catalog`), the [`Backend`] the provider was built for and the configuration,
//! then passed down (the loop's `AgentSettings`, the prompt and tool set, pricing). Nothing after
//! that decides a capability by comparing provider names.

use lathe_protocol::ThinkingFormat;
use lathe_provider::Protocol;
use lathe_provider::catalog::{self, ModelInfo, Price};

/// How the model is reached: over one of the wire protocols, or in process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// An HTTP provider speaking `Protocol`.
    Http(Protocol),
    /// Lathe's embedded local model (`lathe-local`).
    Local,
}

impl Backend {
    /// The backend a provider label recorded in a session file names (`anthropic`, `openai`,
    /// `responses`, `local`, see `lathe_provider::Provider::name`). A label Lathe does not know is
    /// taken for an OpenAI-compatible server.
    pub fn from_label(label: &str) -> Backend {
        match label {
            "anthropic" => Backend::Http(Protocol::Anthropic),
            "responses" => Backend::Http(Protocol::OpenAiResponses),
            "local" => Backend::Local,
            _ => Backend::Http(Protocol::OpenAiChat),
        }
    }

    /// Whether the usage this backend reports counts cache reads inside the input tokens
    /// (OpenAI-style: yes; Anthropic: no; the local model has no prompt-cache accounting, so yes).
    pub fn input_includes_cache_reads(self) -> bool {
        self != Backend::Http(Protocol::Anthropic)
    }

    /// The reasoning format the backend produces and echoes.
    pub fn thinking_format(self) -> ThinkingFormat {
        match self {
            Backend::Http(protocol) => protocol.thinking_format(),
            Backend::Local => ThinkingFormat::Local,
        }
    }

    /// Whether its tokens cost money (the local model's do not).
    pub fn is_priced(self) -> bool {
        self != Backend::Local
    }

    /// The tools and prompt its models get.
    pub fn tool_set(self) -> ToolSet {
        match self {
            Backend::Http(_) => ToolSet::Full,
            Backend::Local => ToolSet::Small,
        }
    }
}

/// The prompt and tool set a model gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSet {
    /// Every built-in tool and the full core prompt.
    Full,
    /// For a small model in a small window: the short core prompt (`crate::prompt::LOCAL_CORE`),
    /// without the tools of `crate::prompt::LOCAL_DROPPED_TOOLS`, `write_file` that only creates
    /// and the strict `edit_file`; the environment, instructions and a workspace listing open the
    /// first message of a new session, so the system turn is byte-identical in every run.
    Small,
}

/// The capabilities and limits of one model as one provider serves it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelProfile {
    /// How it is reached.
    pub backend: Backend,
    /// Context window (tokens; configuration applied), output limit (tokens), prices (USD per
    /// million tokens; zero when not [`Backend::is_priced`]), reasoning and image support, and
    /// whether reported input counts include cache reads.
    pub info: ModelInfo,
    /// The reasoning format the provider produces and echoes.
    pub thinking_format: ThinkingFormat,
    /// The prompt and tools it gets.
    pub tool_set: ToolSet,
    /// The provider's suggested cap on the tool calls of one response (0 = unlimited); `None`
    /// when it has none (the configuration or Lathe's default applies).
    pub max_calls_per_response: Option<u32>,
}

impl ModelProfile {
    /// The profile of `model` on `backend` from the catalog alone: the catalog's window, limits
    /// and prices, with the backend's cache accounting and pricing, and no call cap.
    pub fn new(model: &str, backend: Backend) -> ModelProfile {
        let mut info = catalog::lookup(model);
        info.input_includes_cache_reads = backend.input_includes_cache_reads();
        if !backend.is_priced() {
            info.price = Price::default();
        }
        ModelProfile {
            backend,
            info,
            thinking_format: backend.thinking_format(),
            tool_set: backend.tool_set(),
            max_calls_per_response: None,
        }
    }

    /// This profile with a context window of `tokens`.
    pub fn with_context_window(mut self, tokens: u32) -> ModelProfile {
        self.info.context_window = tokens;
        self
    }

    /// This profile with the provider's suggested cap on calls per response.
    pub fn with_max_calls_per_response(mut self, cap: Option<u32>) -> ModelProfile {
        self.max_calls_per_response = cap;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_accounting_and_prices_follow_the_backend() {
        let anthropic = ModelProfile::new("claude-sonnet-4-5", Backend::Http(Protocol::Anthropic));
        assert!(!anthropic.info.input_includes_cache_reads);
        assert!(anthropic.info.price.input > 0.0);
        let routed = ModelProfile::new("claude-sonnet-4-5", Backend::from_label("openai"));
        assert!(routed.info.input_includes_cache_reads);
        let local = ModelProfile::new("claude-sonnet-4-5", Backend::from_label("local"));
        assert_eq!(local.info.price, Price::default());
        assert_eq!(local.tool_set, ToolSet::Small);
        assert_eq!(local.thinking_format, ThinkingFormat::Local);
    }
}
