#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use lathe_protocol::ModelRequest;
use lathe_provider::{ModelStream, Provider};
use tokio_util::sync::CancellationToken;

use super::*;

/// A provider that only suggests a cap on calls per response.
struct Suggests(Option<u32>);

impl Provider for Suggests {
    fn name(&self) -> &str {
        "suggests"
    }

    fn stream(&self, _request: &ModelRequest, _cancel: CancellationToken) -> ModelStream {
        Box::pin(futures::stream::empty())
    }

    fn max_calls_per_response(&self) -> Option<u32> {
        self.0
    }
}

fn cap(flag: Option<u32>, config: &str, suggestion: Option<u32>) -> u32 {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config).unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let flags =
        Flags { dir: Some(workspace.path().to_path_buf()), max_calls_per_response: flag, ..Flags::default() };
    let config = Config::resolve(&flags, home.path()).unwrap();
    let resolved = config.resolved(
        Arc::new(Suggests(suggestion)),
        "m".into(),
        "anthropic",
        Backend::Http(lathe_provider::Protocol::Anthropic),
    );
    config.agent_settings(&resolved).max_calls_per_response
}

#[test]
fn the_call_cap_is_the_users_then_the_providers_then_the_default() {
    assert_eq!(cap(None, "", None), DEFAULT_MAX_CALLS_PER_RESPONSE);
    assert_eq!(cap(None, "", Some(1)), 1);
    assert_eq!(cap(None, "max_calls_per_response = 4", Some(1)), 4);
    assert_eq!(cap(Some(0), "max_calls_per_response = 4", Some(1)), 0, "the flag wins; 0 = unlimited");
}
