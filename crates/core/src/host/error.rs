//! Why a session could not start.

use crate::config::ConfigError;

/// A session could not start: something the user must fix (exit status 2 in the CLI). Reported
/// before anything on disk is touched.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Bad flag value (a malformed session id among them), missing directory, unknown provider.
    #[error("{0}")]
    Usage(String),
    /// The session to continue or resume does not exist or its file cannot be read.
    #[error("{0}")]
    Session(String),
    /// A config file is unreadable or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
}
