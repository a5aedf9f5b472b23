use super::*;
use pretty_assertions::assert_eq;

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
}

#[test]
fn anthropic_defaults_use_the_public_host_and_key_header() {
    let config = ProviderConfig { model: "claude-sonnet-4-5".into(), ..ProviderConfig::default() };
    let resolved = config.resolve_with(env_of(&[("ANTHROPIC_API_KEY", "sk-ant")])).unwrap();
    assert_eq!(resolved.endpoint, "https://api.anthropic.com/v1/messages");
    assert_eq!(resolved.headers.get("x-api-key").map(String::as_str), Some("sk-ant"));
    assert_eq!(resolved.headers.get("anthropic-version").map(String::as_str), Some("2023-06-01"));
}

#[test]
fn openai_base_url_from_env_includes_v1() {
    let config = ProviderConfig { protocol: Protocol::OpenAiResponses, ..ProviderConfig::default() };
    let resolved = config
        .resolve_with(env_of(&[("OPENAI_API_KEY", "sk"), ("OPENAI_BASE_URL", "https://proxy.example/v1/")]))
        .unwrap();
    assert_eq!(resolved.endpoint, "https://proxy.example/v1/responses");
    assert_eq!(resolved.headers.get("authorization").map(String::as_str), Some("Bearer sk"));
}

#[test]
fn missing_key_is_allowed_only_on_loopback() {
    let local = ProviderConfig {
        protocol: Protocol::OpenAiChat,
        base_url: Some("http://127.0.0.1:8080/v1".into()),
        ..ProviderConfig::default()
    };
    let resolved = local.resolve_with(env_of(&[])).unwrap();
    assert_eq!(resolved.api_key, None);
    assert!(!resolved.headers.contains_key("authorization"));
    let localhost = ProviderConfig { base_url: Some("http://localhost:11434/v1".into()), ..local.clone() };
    assert!(localhost.resolve_with(env_of(&[])).is_ok());
    let remote = ProviderConfig { base_url: Some("https://api.deepseek.com/v1".into()), ..local };
    let err = remote.resolve_with(env_of(&[])).unwrap_err();
    assert!(matches!(&err, ProviderError::Config { message } if message.contains("OPENAI_API_KEY")), "{err}");
}

#[test]
fn custom_key_env_and_headers_are_used() {
    let config = ProviderConfig {
        protocol: Protocol::OpenAiChat,
        base_url: Some("https://api.deepseek.com/v1".into()),
        api_key_env: Some("DEEPSEEK_API_KEY".into()),
        headers: [("X-Title".to_string(), "lathe".to_string())].into(),
        ..ProviderConfig::default()
    };
    let resolved = config.resolve_with(env_of(&[("DEEPSEEK_API_KEY", "dk")])).unwrap();
    assert_eq!(resolved.endpoint, "https://api.deepseek.com/v1/chat/completions");
    assert_eq!(resolved.headers.get("x-title").map(String::as_str), Some("lathe"));
    assert_eq!(resolved.api_key.as_deref(), Some("dk"));
}

#[test]
fn bad_base_url_is_a_config_error() {
    let config =
        ProviderConfig { base_url: Some("ftp://x".into()), api_key: Some("k".into()), ..Default::default() };
    assert!(matches!(config.resolve_with(env_of(&[])), Err(ProviderError::Config { .. })));
}

#[test]
fn config_deserialises_from_toml_with_defaults() {
    let config: ProviderConfig = serde_json::from_value(serde_json::json!({
        "protocol": "openai-chat", "model": "deepseek-chat", "retry": {"max_retries": 2}
    }))
    .unwrap();
    assert_eq!(config.protocol, Protocol::OpenAiChat);
    assert_eq!(config.retry.max_retries, 2);
    assert_eq!(config.retry.initial_delay_ms, 1000);
    assert_eq!(config.idle_timeout_ms, 120_000);
}

#[test]
fn every_spelling_of_a_protocol_name_means_the_same_when_parsed_and_deserialised() {
    for name in ["anthropic", "openai", "openai-chat", "chat", "responses", "openai-responses"] {
        let parsed: Protocol = serde_json::from_value(serde_json::json!(name)).unwrap();
        assert_eq!(Protocol::from_name(name), Some(parsed), "{name}");
    }
    assert_eq!(Protocol::from_name("local"), None);
}
