//! Slash commands: the table of commands (name, argument, one-line description), parsing of a
//! typed line into a [`SlashCommand`], completion of a partly typed name, and the hint for an
//! unknown one (which never reaches the model). A name the session's custom commands or skills
//! define ([`UserCommand`], from the `commands` event) parses as [`SlashCommand::User`]: the line
//! goes to the session, which expands it. Built-in names win.

use lathe_protocol::UserCommand;

/// One command of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandInfo {
    /// Name without the slash.
    pub name: &'static str,
    /// Argument syntax, empty when it takes none.
    pub argument: &'static str,
    /// What it does, one line.
    pub description: &'static str,
}

/// Every command, in the order `/help` lists them.
pub const COMMANDS: &[CommandInfo] = &[
    CommandInfo { name: "help", argument: "", description: "list commands and keys" },
    CommandInfo {
        name: "clear",
        argument: "",
        description: "start a new conversation (the old one stays saved)",
    },
    CommandInfo { name: "cost", argument: "", description: "tokens and estimated cost of this session" },
    CommandInfo { name: "status", argument: "", description: "session, model, permission mode, context" },
    CommandInfo { name: "jobs", argument: "", description: "background shell jobs: state, age, command" },
    CommandInfo {
        name: "team",
        argument: "[args]",
        description: "teammates: state, last activity; stop NAME; coordinator on|off",
    },
    CommandInfo {
        name: "report",
        argument: "",
        description: "files changed, commands run, claims without evidence",
    },
    CommandInfo {
        name: "goal",
        argument: "[cond]",
        description: "work toward a condition checked after each turn (--check \"cmd\"); clear; budget +N; alone: its status",
    },
    CommandInfo {
        name: "loop",
        argument: "[args]",
        description: "INTERVAL PROMPT runs a prompt every 5m, 1h, …; PROMPT alone: the model paces it; stop; alone: its state",
    },
    CommandInfo { name: "model", argument: "[name]", description: "show or switch the model" },
    CommandInfo {
        name: "mode",
        argument: "[mode]",
        description: "show or set the permission mode (default, accept-edits, plan, auto, dont-ask, bypass)",
    },
    CommandInfo {
        name: "plan",
        argument: "[task]",
        description: "plan mode: read-only, the model presents a plan to run or revise; a task is sent",
    },
    CommandInfo {
        name: "resume",
        argument: "[id]",
        description: "continue an earlier session of this directory",
    },
    CommandInfo {
        name: "rewind",
        argument: "",
        description: "go back to an earlier prompt, restoring files",
    },
    CommandInfo {
        name: "compact",
        argument: "[focus]",
        description: "summarize the conversation now to free context (optional focus for the summary)",
    },
    CommandInfo { name: "skills", argument: "", description: "list the skills (/<skill-name> runs one)" },
    CommandInfo { name: "mcp", argument: "", description: "MCP servers: status and tool count" },
    CommandInfo {
        name: "memory",
        argument: "[cmd]",
        description: "long-term memories: list them; show ID opens one, forget ID deletes it",
    },
    CommandInfo { name: "quit", argument: "", description: "exit (also /exit)" },
];

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/help`
    Help,
    /// `/clear`
    Clear,
    /// `/cost`
    Cost,
    /// `/status`
    Status,
    /// `/jobs`
    Jobs,
    /// `/team`, `/team stop NAME`, `/team coordinator on|off`
    Team(Option<String>),
    /// `/report`
    Report,
    /// `/goal [condition] [--check "command"]`, `/goal clear`, `/goal budget +N`
    Goal(Option<String>),
    /// `/loop [interval] [prompt]`, `/loop stop`
    Loop(Option<String>),
    /// `/model [name]`
    Model(Option<String>),
    /// `/mode [mode]`
    Mode(Option<String>),
    /// `/plan [task]`
    Plan(Option<String>),
    /// `/resume [id]`
    Resume(Option<String>),
    /// `/rewind`
    Rewind,
    /// `/compact [focus]`
    Compact(Option<String>),
    /// `/skills`
    Skills,
    /// `/mcp`
    Mcp,
    /// `/memory [show ID | forget ID]`
    Memory(Option<String>),
    /// `/quit`, `/exit`
    Quit,
    /// A custom command or a skill of the session: the whole line is sent to it.
    User {
        /// The command's name.
        name: String,
    },
}

/// A line starting with `/` that is not a command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlashError {
    /// No such command.
    #[error("unknown command /{name}{}; /help lists the commands", suggestion.map(|s| format!(" (did you mean /{s}?)")).unwrap_or_default())]
    Unknown {
        /// What was typed after the slash.
        name: String,
        /// The closest known name.
        suggestion: Option<&'static str>,
    },
    /// The command takes no argument.
    #[error("/{name} takes no argument")]
    UnexpectedArgument {
        /// The command.
        name: &'static str,
    },
}

/// The goal of `/goal <condition> [--check "command"]`: the condition, and the command after
/// `--check` (quotes around it removed).
pub fn goal_spec(argument: &str) -> lathe_protocol::goal::GoalSpec {
    let (condition, check) = match argument.split_once("--check") {
        Some((condition, check)) => {
            let check = check.trim();
            let unquoted = ['"', '\'']
                .iter()
                .find_map(|quote| check.strip_prefix(*quote).and_then(|rest| rest.strip_suffix(*quote)));
            (condition.trim(), Some(unquoted.unwrap_or(check).to_string()))
        }
        None => (argument.trim(), None),
    };
    lathe_protocol::goal::GoalSpec::new(condition, check)
}

/// Whether `line` is meant as a command: `/` followed by a word of letters, digits and `-`
/// (so a prompt starting with a path such as `/usr/bin/env is missing` goes to the model).
pub fn is_command(line: &str) -> bool {
    lathe_protocol::extensions::command_name(line).is_some()
}

/// Parses a line for which [`is_command`] holds.
pub fn parse(line: &str) -> Result<SlashCommand, SlashError> {
    let line = line.trim();
    let line = line.strip_prefix('/').unwrap_or(line);
    let (name, argument) = match line.split_once(char::is_whitespace) {
        Some((name, argument)) => (name, Some(argument.trim().to_string()).filter(|a| !a.is_empty())),
        None => (line, None),
    };
    let none = |command: SlashCommand, name: &'static str| match &argument {
        Some(_) => Err(SlashError::UnexpectedArgument { name }),
        None => Ok(command),
    };
    match name {
        "help" | "?" => none(SlashCommand::Help, "help"),
        "clear" | "new" => none(SlashCommand::Clear, "clear"),
        "cost" => none(SlashCommand::Cost, "cost"),
        "status" => none(SlashCommand::Status, "status"),
        "jobs" => none(SlashCommand::Jobs, "jobs"),
        "team" => Ok(SlashCommand::Team(argument)),
        "report" => none(SlashCommand::Report, "report"),
        "goal" => Ok(SlashCommand::Goal(argument)),
        "loop" => Ok(SlashCommand::Loop(argument)),
        "model" => Ok(SlashCommand::Model(argument)),
        "mode" | "permissions" => Ok(SlashCommand::Mode(argument)),
        "plan" => Ok(SlashCommand::Plan(argument)),
        "resume" => Ok(SlashCommand::Resume(argument)),
        "rewind" => none(SlashCommand::Rewind, "rewind"),
        "compact" => Ok(SlashCommand::Compact(argument)),
        "skills" => none(SlashCommand::Skills, "skills"),
        "mcp" => none(SlashCommand::Mcp, "mcp"),
        "memory" | "memories" => Ok(SlashCommand::Memory(argument)),
        "quit" | "exit" => none(SlashCommand::Quit, "quit"),
        other => Err(SlashError::Unknown { name: other.to_string(), suggestion: closest(other) }),
    }
}

/// Parses a line for which [`is_command`] holds, knowing the session's own commands `user`: an
/// unknown built-in name that `user` defines is [`SlashCommand::User`].
pub fn parse_with(line: &str, user: &[UserCommand]) -> Result<SlashCommand, SlashError> {
    match parse(line) {
        Err(SlashError::Unknown { name, .. }) if user.iter().any(|command| command.name == name) => {
            Ok(SlashCommand::User { name })
        }
        other => other,
    }
}

/// Commands whose name starts with the typed `prefix` (without the slash), in table order.
pub fn complete(prefix: &str) -> Vec<CommandInfo> {
    COMMANDS.iter().copied().filter(|command| command.name.starts_with(prefix)).collect()
}

/// The known name nearest to `typed` (edit distance at most 2), if any.
fn closest(typed: &str) -> Option<&'static str> {
    COMMANDS
        .iter()
        .map(|command| (distance(typed, command.name), command.name))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

/// Levenshtein distance between two short strings.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
#[path = "slash_tests.rs"]
mod tests;
