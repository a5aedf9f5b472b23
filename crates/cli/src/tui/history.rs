//! Prompt history shared by all sessions: `~/.lathe/history` (moved with `LATHE_HOME`), one JSON
//! string per line so multi-line prompts survive. The last [`KEEP`] prompts are loaded; when the
//! file has grown past twice that, it is rewritten with only those. Prompts longer than
//! [`MAX_PROMPT_BYTES`] (big pastes) are not recorded. A history that cannot be read or written
//! never stops the UI: the error is returned for a one-line warning.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Prompts kept.
pub const KEEP: usize = 1_000;
/// Longer prompts are not recorded.
pub const MAX_PROMPT_BYTES: usize = 16 * 1024;

/// The history file.
#[derive(Debug, Clone)]
pub struct PromptHistory {
    path: PathBuf,
}

impl PromptHistory {
    /// The history file under Lathe's home directory.
    pub fn in_home(home: &Path) -> Self {
        PromptHistory { path: home.join("history") }
    }

    /// The recorded prompts, oldest first (an absent file is an empty history). Lines that are not
    /// JSON strings are skipped.
    pub fn load(&self) -> std::io::Result<Vec<String>> {
        let text = match std::fs::read(&self.path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(error),
        };
        let mut prompts: Vec<String> =
            text.lines().filter_map(|line| serde_json::from_str::<String>(line).ok()).collect();
        if prompts.len() > 2 * KEEP {
            prompts.drain(..prompts.len() - KEEP);
            self.rewrite(&prompts)?;
        } else if prompts.len() > KEEP {
            prompts.drain(..prompts.len() - KEEP);
        }
        Ok(prompts)
    }

    /// Appends one prompt (skipped when empty or too long).
    pub fn append(&self, prompt: &str) -> std::io::Result<()> {
        if prompt.trim().is_empty() || prompt.len() > MAX_PROMPT_BYTES {
            return Ok(());
        }
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut line = serde_json::to_string(prompt).map_err(std::io::Error::other)?;
        line.push('\n');
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.path)?;
        file.write_all(line.as_bytes())
    }

    fn rewrite(&self, prompts: &[String]) -> std::io::Result<()> {
        let mut text = String::new();
        for prompt in prompts {
            text.push_str(&serde_json::to_string(prompt).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        let temporary = self.path.with_extension("tmp");
        std::fs::write(&temporary, text)?;
        std::fs::rename(&temporary, &self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn history_round_trips_multi_line_prompts_across_instances() {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let history = PromptHistory::in_home(home.path());
        assert_eq!(history.load().unwrap_or_else(|e| panic!("{e}")), Vec::<String>::new());
        history.append("first").unwrap_or_else(|e| panic!("{e}"));
        history.append("two\nlines").unwrap_or_else(|e| panic!("{e}"));
        history.append("   ").unwrap_or_else(|e| panic!("{e}"));
        let again = PromptHistory::in_home(home.path());
        assert_eq!(
            again.load().unwrap_or_else(|e| panic!("{e}")),
            vec!["first".to_string(), "two\nlines".into()]
        );
    }

    #[test]
    fn history_keeps_the_newest_prompts_and_trims_the_file() {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let history = PromptHistory::in_home(home.path());
        let mut text = String::from("not json\n");
        for i in 0..(2 * KEEP + 5) {
            text.push_str(&format!("\"p{i}\"\n"));
        }
        std::fs::write(home.path().join("history"), text).unwrap_or_else(|e| panic!("{e}"));
        let prompts = history.load().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(prompts.len(), KEEP);
        assert_eq!(prompts.last().map(String::as_str), Some(format!("p{}", 2 * KEEP + 4).as_str()));
        let lines = std::fs::read_to_string(home.path().join("history")).unwrap_or_default().lines().count();
        assert_eq!(lines, KEEP);
    }
}
