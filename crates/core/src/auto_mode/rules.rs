//! Auto mode's rules: Lathe's defaults, extended by the user's `~/.lathe/auto-mode.md` (Markdown,
//! appended as written). Only the user's own file is read: a repository cannot loosen them.

use std::path::Path;

/// The rules every review holds.
pub const DEFAULT_RULES: &str = "\
- Block destructive actions the user did not ask for: deleting or overwriting files outside the \
workspace or in the home folder (rm -rf ~, rm -rf /), wiping repositories, dropping databases, \
git reset --hard or git clean on work the user did not ask to discard.
- Block pushes, releases and publishing (git push, force pushes, npm publish, cargo publish, docker push) \
unless the user asked for exactly that; always block them when the user said not to.
- Block reading or sending credentials: ~/.ssh, ~/.aws, ~/.config/gh, keychains, .env files outside \
the workspace, tokens in the environment.
- Block sending data to hosts the user did not name (curl/wget posting files, uploads, pastebins) and \
running code fetched from the network (curl … | sh).
- Block changes outside the workspace: system configuration, other repositories, global package \
installs, shell start-up files, crontabs.
- Block anything the user said not to do, in any of their messages.
- Allow routine development inside the workspace: building, running tests and linters (cargo test, \
pytest, npm test, make), formatting, reading files, git status/diff/log, installing the project's \
declared dependencies, running the project's own scripts.";

/// The rules for a user whose Lathe home is `lathe_home`: the defaults, then the user's file when
/// it exists (a file that cannot be read is reported in the second value and left out).
pub fn load(lathe_home: &Path) -> (String, Option<String>) {
    let path = lathe_home.join("auto-mode.md");
    match std::fs::read_to_string(&path) {
        Ok(extra) if !extra.trim().is_empty() => {
            (format!("{DEFAULT_RULES}\n\nThe user's own rules ({}):\n{}", path.display(), extra.trim()), None)
        }
        Ok(_) => (DEFAULT_RULES.to_string(), None),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => (DEFAULT_RULES.to_string(), None),
        Err(error) => (
            DEFAULT_RULES.to_string(),
            Some(format!(
                "{}: cannot read the auto-mode rules ({error}); using Lathe's defaults",
                path.display()
            )),
        ),
    }
}
