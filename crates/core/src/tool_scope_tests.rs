#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use super::*;

fn list(entries: &[&str]) -> ToolList {
    let entries: Vec<String> = entries.iter().map(|entry| entry.to_string()).collect();
    ToolList::parse(&entries, "the agent `reviewer` (.claude/agents/reviewer.md)", Path::new("/proj"))
}

#[test]
fn names_scopes_and_notes() {
    let tools = list(&["Read", "Grep", "Bash(git diff *)", "Frobnicate", "Read(src/**)"]);
    assert_eq!(tools.names().collect::<Vec<_>>(), ["read_file", "grep", "shell"]);
    assert!(tools.scope("read_file").is_some_and(ToolScope::is_whole), "a bare Read grants it all");
    let shell = tools.scope("shell").expect("shell");
    assert!(!shell.is_whole());
    assert_eq!(shell.entries(), ["Bash(git diff *)"]);
    assert_eq!(tools.notes, ["tool `Frobnicate` is unknown; left out"]);
    let run = |command: &str| Access::Execute { command: command.into(), cwd: PathBuf::from("/proj") };
    assert!(shell.check("shell", &run("git diff")).is_ok());
    assert!(shell.check("shell", &run("touch PWNED")).is_err());
}

#[test]
fn a_scope_that_does_not_parse_grants_nothing() {
    let tools = list(&["Read(src/[)"]);
    assert!(tools.is_empty(), "{:?}", tools.names().collect::<Vec<_>>());
    assert_eq!(tools.notes.len(), 1);
    assert!(
        tools.notes[0].contains("Read(src/[)") && tools.notes[0].contains("reviewer.md"),
        "{:?}",
        tools.notes
    );
}
