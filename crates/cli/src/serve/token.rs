//! The access tokens of one `lathe serve`: two random 256-bit values made at start, a full
//! ("steer") one and a read-only ("watch") one, hex-encoded. They are kept in a file readable by
//! the user only (mode 0600, in a directory of mode 0700) under `~/.lathe/serve/`, printed once as
//! URLs, and compared in constant time. They are never written to the log.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rand::TryRngCore;

/// What a token lets a client do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Read only: list sessions, watch one, get its events replayed.
    Watch,
    /// Everything a watcher does, and start or resume sessions, prompt, cancel, change the mode
    /// and answer the permission prompts it is sent.
    Steer,
}

impl Role {
    /// `watch` or `steer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Watch => "watch",
            Role::Steer => "steer",
        }
    }
}

/// The two tokens.
#[derive(Clone)]
pub struct Tokens {
    steer: String,
    watch: String,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokens(…)")
    }
}

impl Tokens {
    /// Two fresh tokens from the operating system's random source (32 bytes each).
    pub fn generate() -> std::io::Result<Tokens> {
        Ok(Tokens { steer: random_hex()?, watch: random_hex()? })
    }

    /// The full token.
    pub fn steer(&self) -> &str {
        &self.steer
    }

    /// The read-only token.
    pub fn watch(&self) -> &str {
        &self.watch
    }

    /// The role `presented` grants, if it is one of the tokens (compared in constant time).
    pub fn role(&self, presented: &str) -> Option<Role> {
        if same(presented.as_bytes(), self.steer.as_bytes()) {
            Some(Role::Steer)
        } else if same(presented.as_bytes(), self.watch.as_bytes()) {
            Some(Role::Watch)
        } else {
            None
        }
    }

    /// Writes the tokens and the URL as JSON to `dir/<port>.json` (the directory made with mode
    /// 0700, the file with mode 0600, replacing an older one); returns the file's path.
    pub fn save(&self, dir: &Path, port: u16, url: &str) -> std::io::Result<PathBuf> {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let path = dir.join(format!("{port}.json"));
        let _ = std::fs::remove_file(&path);
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
        let body = serde_json::json!({"url": url, "steer": self.steer, "watch": self.watch, "pid": std::process::id()});
        writeln!(file, "{body}")?;
        Ok(path)
    }
}

fn random_hex() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.try_fill_bytes(&mut bytes).map_err(std::io::Error::other)?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Equal bytes, in time that depends on the lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::{Role, Tokens};

    #[test]
    fn tokens_are_256_bit_distinct_and_grant_their_role_only() {
        let tokens = Tokens::generate().expect("random");
        assert_eq!(tokens.steer().len(), 64);
        assert_ne!(tokens.steer(), tokens.watch());
        assert_eq!(tokens.role(tokens.steer()), Some(Role::Steer));
        assert_eq!(tokens.role(tokens.watch()), Some(Role::Watch));
        assert_eq!(tokens.role(""), None);
        assert_eq!(tokens.role(&tokens.steer()[..63]), None);
        assert!(!format!("{tokens:?}").contains(tokens.steer()));
    }

    #[test]
    fn the_token_file_is_the_users_only() {
        let dir = tempfile::tempdir().expect("dir");
        let tokens = Tokens::generate().expect("random");
        let path = tokens.save(&dir.path().join("serve"), 8080, "http://x/").expect("saved");
        let mode = std::fs::metadata(&path).expect("file").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(dir.path().join("serve")).expect("dir").permissions().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
        assert!(std::fs::read_to_string(&path).expect("read").contains(tokens.watch()));
    }
}
