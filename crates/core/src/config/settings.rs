//! The settings files of a session, found and parsed once: `$CLAUDE_CONFIG_DIR/settings.json` (else
//! `~/.claude/settings.json`), `<lathe home>/settings.json`, then the project's
//! `.claude/settings.json`, `.claude/settings.local.json`, `.lathe/settings.json` and
//! `.lathe/settings.local.json` (the order of `lathe_policy::settings::settings_files`).
//!
//! Permission rules (`lathe_policy::settings::load_read`) and hooks
//! (`crate::hooks::HookTable::from_read`) are both taken from the one [`SettingsSources`], so they
//! always see the same files with the same content.

use std::path::{Path, PathBuf};

use lathe_policy::settings::{self, ReadSettings};

/// Claude Code's user directory: `$CLAUDE_CONFIG_DIR` (a relative one is taken from the current
/// directory), else `~/.claude`; `None` when neither the variable nor a home directory is known.
pub fn claude_home() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|dir| !dir.is_empty()) {
        return std::path::absolute(PathBuf::from(dir)).ok();
    }
    dirs::home_dir().filter(|home| home.is_absolute()).map(|home| home.join(".claude"))
}

/// The settings files of one session, read and parsed.
#[derive(Debug, Clone)]
pub struct SettingsSources {
    /// The user's home directory (`$HOME` when absolute): what `~/` in rules means.
    pub home: Option<PathBuf>,
    /// Each file in order, user files first, with what it holds.
    pub files: Vec<ReadSettings>,
}

impl SettingsSources {
    /// Finds and reads the settings files of `project` with Lathe's home at `lathe_home`, Claude
    /// Code's user directory from [`claude_home`] and the home directory from `$HOME`.
    pub fn find(lathe_home: &Path, project: &Path) -> SettingsSources {
        let home = std::env::var_os("HOME").map(PathBuf::from).filter(|home| home.is_absolute());
        SettingsSources::read(claude_home().as_deref(), home, lathe_home, project)
    }

    /// Reads the settings files of `project` given each directory explicitly (`claude_dir`: Claude
    /// Code's user directory, `home`: the user's home directory).
    pub fn read(
        claude_dir: Option<&Path>,
        home: Option<PathBuf>,
        lathe_home: &Path,
        project: &Path,
    ) -> SettingsSources {
        let files = settings::settings_files(claude_dir, home.as_deref(), lathe_home, project);
        SettingsSources { files: settings::read(&files), home }
    }

    /// The paths of the files, in order (missing ones included).
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|read| read.file.path.as_path())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use lathe_policy::settings::SettingsContent;

    use super::*;

    #[test]
    fn each_file_is_read_once_in_order_with_its_problem_kept() {
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join("claude");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&claude).unwrap();
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::write(claude.join("settings.json"), r#"{"permissions": {"deny": ["Read(x)"]}}"#).unwrap();
        std::fs::write(project.join(".claude/settings.json"), "{not json").unwrap();
        let sources = SettingsSources::read(Some(&claude), None, &dir.path().join("lathe"), &project);
        assert_eq!(sources.files.len(), 6);
        assert_eq!(sources.paths().next(), Some(claude.join("settings.json").as_path()));
        assert!(matches!(sources.files[0].content, SettingsContent::Json(_)));
        assert!(matches!(sources.files[1].content, SettingsContent::Missing));
        assert!(matches!(sources.files[2].content, SettingsContent::NotJson(_)));
    }
}
