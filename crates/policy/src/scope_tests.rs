#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use super::*;

fn scope(entries: &[&str]) -> ToolScope {
    let mut scope = ToolScope::default();
    for entry in entries {
        let (_, has_specifier) = entry_name(entry);
        scope.add(entry, has_specifier, "agents/reviewer.md", anchors(Path::new("/proj"), None)).unwrap();
    }
    scope
}

fn run(command: &str) -> Access {
    Access::Execute { command: command.into(), cwd: PathBuf::from("/proj") }
}

#[test]
fn a_shell_scope_covers_every_simple_command_or_refuses() {
    let git_diff = scope(&["Bash(git diff *)"]);
    let table = [
        ("git diff", true),
        ("git diff HEAD~1 -- src", true),
        ("git diff > /dev/null", true),
        ("touch PWNED", false),
        ("git diff && touch PWNED", false),
        ("git diff; rm -rf /", false),
        ("git diff $(touch PWNED)", false),
        ("git diff > out.txt", false),
        ("sudo git diff", false),
        ("GIT_EXTERNAL_DIFF=./evil git diff", false),
        ("git diffx", false),
        ("git status", false),
        ("eval \"$X\"", false),
        ("./tools/git diff", false),
        ("tools/git diff HEAD", false),
        ("/tmp/x/git diff", false),
        ("/usr/bin/git diff", true),
        ("git diff <<EOF\n$(touch P)\nEOF", false),
        ("", false),
    ];
    for (command, inside) in table {
        let got = git_diff.check("shell", &run(command));
        assert_eq!(got.is_ok(), inside, "{command:?}: {got:?}");
        if let Err(outside) = got {
            assert_eq!(outside.entries, ["Bash(git diff *)"]);
            assert!(outside.to_string().contains("`Bash(git diff *)`"), "{outside}");
        }
    }
    // The legacy prefix form of skills binds the same way.
    let status = scope(&["Bash(git status:*)"]);
    assert!(status.check("shell", &run("git status --short")).is_ok());
    assert!(status.check("shell", &run("rm -rf build")).is_err());
}

#[test]
fn an_unscoped_entry_grants_the_whole_tool() {
    for entries in [&["Bash"][..], &["Bash(git diff *)", "Bash"], &["Bash(*)"]] {
        let scope = scope(entries);
        assert!(scope.is_whole(), "{entries:?}");
        assert!(scope.check("shell", &run("touch anything")).is_ok());
    }
}

#[test]
fn path_and_domain_scopes() {
    let read = scope(&["Read(./src/**)"]);
    assert!(read.check("read_file", &Access::Read(vec!["/proj/src/a.rs".into()])).is_ok());
    let outside = read.check("read_file", &Access::Read(vec!["/proj/secrets/key".into()])).unwrap_err();
    assert_eq!(outside.what, "`/proj/secrets/key`");
    let edit = scope(&["Edit(docs/**)"]);
    assert!(edit.check("edit_file", &Access::Write(vec!["/proj/docs/a.md".into()])).is_ok());
    assert!(edit.check("edit_file", &Access::Write(vec!["/proj/src/a.rs".into()])).is_err());
    let fetch = scope(&["WebFetch(domain:docs.rs)"]);
    assert!(fetch.check("web_fetch", &Access::Fetch { url: "https://docs.rs/x".into() }).is_ok());
    assert!(fetch.check("web_fetch", &Access::Fetch { url: "https://evil.com/docs.rs".into() }).is_err());
}

#[test]
fn a_link_inside_a_path_scope_to_a_file_outside_it_is_outside() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("secret")).unwrap();
    std::fs::write(root.join("secret/k"), "TOPSECRET").unwrap();
    std::fs::write(root.join("src/a.rs"), "fn main() {}").unwrap();
    std::os::unix::fs::symlink(root.join("secret/k"), root.join("src/link")).unwrap();
    std::os::unix::fs::symlink(root.join("secret"), root.join("src/dirlink")).unwrap();
    let mut read = ToolScope::default();
    read.add("Read(src/**)", true, "agents/x.md", anchors(&root, None)).unwrap();
    let access = |rel: &str| Access::Read(vec![root.join(rel)]);
    assert!(read.check("read_file", &access("src/a.rs")).is_ok());
    assert!(read.check("read_file", &access("src/link")).is_err());
    assert!(read.check("read_file", &access("src/dirlink/k")).is_err());
}
