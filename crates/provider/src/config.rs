//! Typed provider configuration, deserialisable from TOML (core embeds [`ProviderConfig`] in its
//! config file), and its resolution into what the HTTP client needs: the endpoint URL, the
//! authentication header and the extra headers.
//!
//! Resolution order for the base URL: `base_url`, then the protocol's `*_BASE_URL` environment
//! variable, then the public endpoint. For the key: `api_key`, then the variable named by
//! `api_key_env`, then the protocol's default variable. A missing key is only accepted when the base
//! URL points at a loopback host (lathe-mock, a local server); no auth header is sent then.

use std::collections::BTreeMap;

use lathe_protocol::ProviderError;
use serde::{Deserialize, Serialize};

use crate::retry::RetryConfig;

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Protocol {
    /// Anthropic Messages, `POST {base}/v1/messages`.
    #[default]
    #[serde(rename = "anthropic")]
    Anthropic,
    /// OpenAI Chat Completions (and compatible servers: DeepSeek, OpenRouter, Ollama…),
    /// `POST {base}/chat/completions`.
    #[serde(rename = "openai-chat", alias = "openai", alias = "chat")]
    OpenAiChat,
    /// OpenAI Responses, `POST {base}/responses`.
    #[serde(rename = "openai-responses", alias = "responses")]
    OpenAiResponses,
}

impl Protocol {
    /// The protocol a name in configuration means, every accepted spelling (the same as
    /// deserialisation accepts): `anthropic`; `openai`, `openai-chat` or `chat`; `responses` or
    /// `openai-responses`. `None` for any other name.
    pub fn from_name(name: &str) -> Option<Protocol> {
        match name {
            "anthropic" => Some(Protocol::Anthropic),
            "openai" | "openai-chat" | "chat" => Some(Protocol::OpenAiChat),
            "responses" | "openai-responses" => Some(Protocol::OpenAiResponses),
            _ => None,
        }
    }

    /// The provider name reported by [`crate::Provider::name`]: `anthropic`, `openai`, `responses`.
    pub fn provider_name(self) -> &'static str {
        match self {
            Protocol::Anthropic => "anthropic",
            Protocol::OpenAiChat => "openai",
            Protocol::OpenAiResponses => "responses",
        }
    }

    /// The public base URL used when neither the config nor the environment names one.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Protocol::Anthropic => "https://api.anthropic.com",
            Protocol::OpenAiChat | Protocol::OpenAiResponses => "https://api.openai.com/v1",
        }
    }

    /// The environment variable holding the API key by default.
    pub fn default_key_env(self) -> &'static str {
        match self {
            Protocol::Anthropic => "ANTHROPIC_API_KEY",
            Protocol::OpenAiChat | Protocol::OpenAiResponses => "OPENAI_API_KEY",
        }
    }

    /// The environment variable that may override the base URL.
    pub fn base_url_env(self) -> &'static str {
        match self {
            Protocol::Anthropic => "ANTHROPIC_BASE_URL",
            Protocol::OpenAiChat | Protocol::OpenAiResponses => "OPENAI_BASE_URL",
        }
    }

    /// The path appended to the base URL (Anthropic base URLs are the host root; OpenAI base URLs
    /// include `/v1`).
    pub fn endpoint_path(self) -> &'static str {
        match self {
            Protocol::Anthropic => "/v1/messages",
            Protocol::OpenAiChat => "/chat/completions",
            Protocol::OpenAiResponses => "/responses",
        }
    }

    /// The thinking format this protocol produces and echoes.
    pub fn thinking_format(self) -> lathe_protocol::ThinkingFormat {
        match self {
            Protocol::Anthropic => lathe_protocol::ThinkingFormat::Anthropic,
            Protocol::OpenAiChat => lathe_protocol::ThinkingFormat::OpenAiChat,
            Protocol::OpenAiResponses => lathe_protocol::ThinkingFormat::OpenAiResponses,
        }
    }
}

/// One configured provider. Every field has a default, so `[provider] protocol = "anthropic"` plus
/// a model is a complete TOML table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProviderConfig {
    /// Which wire protocol to speak.
    pub protocol: Protocol,
    /// Base URL; see the module docs for the fallback order.
    pub base_url: Option<String>,
    /// The API key itself (prefer `api_key_env`).
    pub api_key: Option<String>,
    /// Name of the environment variable holding the key (default per protocol).
    pub api_key_env: Option<String>,
    /// Extra request headers (e.g. `anthropic-beta`, `OpenAI-Organization`, `HTTP-Referer`).
    pub headers: BTreeMap<String, String>,
    /// Default model, used when a request does not name one.
    pub model: String,
    /// TCP/TLS connect timeout in milliseconds.
    pub connect_timeout_ms: u64,
    /// Time allowed from sending the request until the response headers arrive, in milliseconds.
    /// Such a timeout is retried.
    pub first_byte_timeout_ms: u64,
    /// Longest silence allowed between two body chunks, in milliseconds. Not retried once content
    /// has arrived.
    pub idle_timeout_ms: u64,
    /// Retry policy.
    pub retry: RetryConfig,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        ProviderConfig {
            protocol: Protocol::Anthropic,
            base_url: None,
            api_key: None,
            api_key_env: None,
            headers: BTreeMap::new(),
            model: String::new(),
            connect_timeout_ms: 10_000,
            first_byte_timeout_ms: 120_000,
            idle_timeout_ms: 120_000,
            retry: RetryConfig::default(),
        }
    }
}

/// The configuration with every fallback applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedConfig {
    /// The full endpoint URL requests are posted to.
    pub endpoint: String,
    /// The key, or `None` for a loopback server without one.
    pub api_key: Option<String>,
    /// Every header to send besides `content-type` (auth, version, configured extras), lower-case
    /// names.
    pub headers: BTreeMap<String, String>,
}

impl ProviderConfig {
    /// Applies the fallbacks, reading the environment through `env` (so tests need not mutate the
    /// process environment).
    ///
    /// # Errors
    /// [`ProviderError::Config`] when the base URL is not an http(s) URL, or when no key is found
    /// and the base URL is not a loopback address.
    pub fn resolve_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<ResolvedConfig, ProviderError> {
        let protocol = self.protocol;
        let base = self
            .base_url
            .clone()
            .filter(|url| !url.trim().is_empty())
            .or_else(|| env(protocol.base_url_env()).filter(|url| !url.trim().is_empty()))
            .unwrap_or_else(|| protocol.default_base_url().to_string());
        let base = base.trim().trim_end_matches('/').to_string();
        let parsed = reqwest::Url::parse(&base).map_err(|err| ProviderError::Config {
            message: format!("base URL {base:?} is not a valid URL: {err}"),
        })?;
        if parsed.scheme() != "http" && parsed.scheme() != "https" {
            return Err(ProviderError::Config {
                message: format!("base URL {base:?} must start with http:// or https://"),
            });
        }
        let key_env = self.api_key_env.clone().unwrap_or_else(|| protocol.default_key_env().to_string());
        let api_key = self
            .api_key
            .clone()
            .filter(|key| !key.is_empty())
            .or_else(|| env(&key_env).filter(|key| !key.is_empty()));
        if api_key.is_none() && !is_loopback(&parsed) {
            return Err(ProviderError::Config {
                message: format!(
                    "no API key for {} at {base}: set the environment variable {key_env} (or `api_key_env` / \
                     `api_key` in the provider config)",
                    protocol.provider_name()
                ),
            });
        }
        let mut headers = BTreeMap::new();
        match protocol {
            Protocol::Anthropic => {
                headers.insert("anthropic-version".to_string(), "2023-06-01".to_string());
                if let Some(key) = &api_key {
                    headers.insert("x-api-key".to_string(), key.clone());
                }
            }
            Protocol::OpenAiChat | Protocol::OpenAiResponses => {
                if let Some(key) = &api_key {
                    headers.insert("authorization".to_string(), format!("Bearer {key}"));
                }
            }
        }
        for (name, value) in &self.headers {
            headers.insert(name.to_ascii_lowercase(), value.clone());
        }
        Ok(ResolvedConfig { endpoint: format!("{base}{}", protocol.endpoint_path()), api_key, headers })
    }

    /// [`ProviderConfig::resolve_with`] reading the process environment.
    ///
    /// # Errors
    /// As [`ProviderConfig::resolve_with`].
    pub fn resolve(&self) -> Result<ResolvedConfig, ProviderError> {
        self.resolve_with(|name| std::env::var(name).ok())
    }
}

/// Whether the URL's host is `localhost` or a loopback IP address.
fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().map(|ip| ip.is_loopback()).unwrap_or(false)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "config_tests.rs"]
mod tests;
