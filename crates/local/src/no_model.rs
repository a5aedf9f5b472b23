//! [`LocalProvider`] in a build without the crate feature `model`: the type lathe-core names, which
//! can never be built. [`LocalProvider::new`] fails with a message naming the build that has local
//! support; the prompt rendering, grammar, output parser and inference code are not compiled.

use std::convert::Infallible;

use lathe_protocol::{ModelRequest, ProviderError};
use lathe_provider::{ModelStream, Provider};
use tokio_util::sync::CancellationToken;

use crate::config::LocalConfig;

/// The local model provider of a build without local support: no value of it exists.
#[derive(Debug)]
pub struct LocalProvider {
    never: Infallible,
}

impl LocalProvider {
    /// Always fails: this build cannot run a local model.
    ///
    /// # Errors
    /// Always `ProviderError::Config`, saying to build with `--features local`.
    pub fn new(_config: LocalConfig) -> Result<Self, ProviderError> {
        Err(ProviderError::Config {
            message: "this build has no local model support; build with --features local".into(),
        })
    }

    /// The model name (never called: no provider exists).
    pub fn model_name(&self) -> &str {
        match self.never {}
    }
}

impl Provider for LocalProvider {
    fn name(&self) -> &str {
        "local"
    }

    fn stream(&self, _request: &ModelRequest, _cancel: CancellationToken) -> ModelStream {
        match self.never {}
    }
}
