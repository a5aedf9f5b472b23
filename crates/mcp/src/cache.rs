//! Tool lists remembered from a server's last start, so a session need not wait for the server:
//! `<lathe home>/mcp-cache/<server>-<fingerprint>.json`, `{"tools": [<MCP Tool>, …]}` as the
//! server listed them (`tools/list`).
//!
//! The fingerprint is the first 16 hex digits of the SHA-256 of the server's transport (command,
//! arguments, environment, or URL and headers) and, for stdio, the working directory: a changed
//! configuration is a new server whose tools are not known yet. Secrets in the environment or the
//! headers only enter the hash; the file holds the tool list alone. Reading and writing are best
//! effort: a missing or unreadable file is no listing, a failed write is logged at debug level.

use std::path::{Path, PathBuf};

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::{ServerConfig, Transport};

#[derive(Serialize, Deserialize)]
struct Listing {
    tools: Vec<Tool>,
}

/// Where the listing of `config` (started in `cwd`) is kept under `dir`.
pub(crate) fn path(dir: &Path, config: &ServerConfig, cwd: &Path) -> PathBuf {
    let mut hash = Sha256::new();
    let identity = match &config.transport {
        Transport::Stdio { command, args, env } => {
            serde_json::json!({"stdio": command, "args": args, "env": env, "cwd": cwd})
        }
        Transport::Http { url, headers } => serde_json::json!({"http": url, "headers": headers}),
    };
    hash.update(identity.to_string().as_bytes());
    let digest = hex::encode(hash.finalize());
    dir.join(format!("{}-{}.json", crate::connect::safe_file_name(&config.name), &digest[..16]))
}

/// The listing saved at `path`, if there is one that parses.
pub(crate) fn read(path: &Path) -> Option<Vec<Tool>> {
    let bytes = std::fs::read(path).ok()?;
    match serde_json::from_slice::<Listing>(&bytes) {
        Ok(listing) => Some(listing.tools),
        Err(error) => {
            tracing::debug!("MCP tool cache {} ignored: {error}", path.display());
            None
        }
    }
}

/// Saves `tools` at `path` (written to a temporary file first, then renamed, so a reader never
/// sees half a file). Unchanged listings are not rewritten.
pub(crate) fn write(path: &Path, tools: &[Tool]) {
    let Ok(text) = serde_json::to_vec(&Listing { tools: tools.to_vec() }) else { return };
    if std::fs::read(path).is_ok_and(|old| old == text) {
        return;
    }
    let saved = (|| -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut file, &text)?;
        file.persist(path).map_err(|error| error.error)?;
        Ok(())
    })();
    if let Err(error) = saved {
        tracing::debug!("MCP tool cache {} not saved: {error}", path.display());
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use crate::config::Scope;

    fn server(name: &str, args: &[&str]) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            transport: Transport::Stdio {
                command: "node".into(),
                args: args.iter().map(|a| a.to_string()).collect(),
                env: Default::default(),
            },
            scope: Scope::Flag,
            source: "test".into(),
        }
    }

    #[test]
    fn a_listing_is_read_back_and_a_changed_configuration_is_another_server() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = Path::new("/project");
        let first = path(dir.path(), &server("gen", &["a.mjs"]), cwd);
        assert_eq!(first, path(dir.path(), &server("gen", &["a.mjs"]), cwd));
        assert_ne!(first, path(dir.path(), &server("gen", &["b.mjs"]), cwd));
        assert_ne!(first, path(dir.path(), &server("gen", &["a.mjs"]), Path::new("/other")));
        assert!(first.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("gen-")));
        assert!(read(&first).is_none());

        let tool: Tool = serde_json::from_value(serde_json::json!({
            "name": "echo", "description": "Echoes", "inputSchema": {"type": "object"}
        }))
        .expect("tool");
        write(&first, std::slice::from_ref(&tool));
        let back = read(&first).expect("saved");
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].name, "echo");

        std::fs::write(&first, "{\"tools\": [").expect("torn");
        assert!(read(&first).is_none(), "a torn file is no listing");
    }
}
