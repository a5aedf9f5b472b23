//! Lathe's configuration, read once at start-up:
//!
//! - [`layer`]: the TOML layers (built-in defaults → `~/.lathe/config.toml` →
//!   `<project>/.lathe/config.toml` → environment → flags) and their types;
//! - [`merge`]: how the layers are merged, as TOML tables, before one deserialisation;
//! - [`settings`]: the Claude-Code-compatible settings files (permission rules and hooks), found
//!   and parsed once and shared by [`crate::permissions`] and [`crate::hooks`].

pub mod layer;
pub mod merge;
pub mod settings;

pub use layer::{ConfigError, ConfigLayer, MemoryEntry, SandboxEntry};
pub use settings::SettingsSources;
