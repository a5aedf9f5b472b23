//! What the user's extensions offer a front end: the `/name` commands a session knows besides the
//! front end's own (custom command files and skills), for menus, completion and `/skills`.

use serde::{Deserialize, Serialize};

/// The command a line names, when it is one: a line is a `/name` command when its first word is
/// `/` followed by a letter (or `?`) and then only letters, digits and `-_:.?` — so `/help`,
/// `/frontend:lint src` and `/?` are commands, and `/usr/bin/foo is slow` (another `/` in the
/// word) or `/ 3` is a prompt. Every front end and print mode use this one rule; a command no one
/// knows is refused, never sent to the model.
pub fn command_name(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('/')?;
    let word = rest.split(char::is_whitespace).next().unwrap_or("");
    let shaped = word.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '?')
        && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '?' | '_' | ':' | '.'));
    shaped.then_some(word)
}

/// Where a `/name` command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserCommandKind {
    /// A custom command file (`.lathe/commands/*.md`, `.claude/commands/*.md`, user-level folders).
    Command,
    /// A skill (`SKILL.md`); `/<skill-name> args` runs its instructions.
    Skill,
}

/// One `/name` command the session expands (sending `/name args` as user input runs it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserCommand {
    /// The name typed after `/` (`greet`, `frontend:lint`, a skill's name).
    pub name: String,
    /// One line: what it does.
    pub description: String,
    /// What the arguments are (`[file] [message]`), from the command's `argument-hint`.
    pub argument_hint: Option<String>,
    /// Command file or skill.
    pub kind: UserCommandKind,
}

#[cfg(test)]
mod tests {
    use super::command_name;

    #[test]
    fn a_command_is_a_slash_word_and_a_path_is_a_prompt() {
        assert_eq!(command_name("/help"), Some("help"));
        assert_eq!(command_name("  /frontend:lint src"), Some("frontend:lint"));
        assert_eq!(command_name("/usr/bin/foo is slow"), None);
        assert_eq!(command_name("/ 3"), None);
        assert_eq!(command_name("fix /tmp"), None);
    }
}
