#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use super::*;

fn rule(text: &str) -> Rule {
    let anchors =
        Anchors { root: Path::new("/proj"), cwd: Path::new("/proj"), home: Some(Path::new("/home/u")) };
    Rule::parse(text, RuleKind::Allow, "test", anchors).unwrap()
}

#[test]
fn command_patterns_keep_the_word_boundary() {
    let table = [
        ("Bash(git diff *)", "git diff", true),
        ("Bash(git diff *)", "git diff HEAD~1", true),
        ("Bash(git diff *)", "git diffx", false),
        ("Bash(git diff*)", "git diffx", true),
        ("Bash(git diff:*)", "git diff --stat", true),
        ("Bash(git diff:*)", "git diff", true),
        ("Bash(git diff:*)", "git difftool", false),
        ("Bash(npm run test)", "npm run test", true),
        ("Bash(npm run test)", "npm run test -- -u", false),
        ("Bash(* --version)", "cargo --version", true),
        ("Bash(git * main)", "git push origin main", true),
        ("Bash", "anything at all", true),
        ("Bash(*)", "rm -rf x", true),
        ("shell(ls *)", "ls -la", true),
    ];
    for (text, command, expected) in table {
        assert_eq!(rule(text).matches_command(command), expected, "{text} vs {command}");
    }
}

#[test]
fn path_patterns_are_gitignore_style() {
    let table = [
        ("Read(//etc/hosts)", "/etc/hosts", true),
        ("Read(~/.ssh/**)", "/home/u/.ssh/id_rsa", true),
        ("Read(/src/**)", "/proj/src/a/b.rs", true),
        ("Read(/src/**)", "/other/src/a.rs", false),
        ("Read(./docs/*.md)", "/proj/docs/a.md", true),
        ("Read(./docs/*.md)", "/proj/docs/x/a.md", false),
        ("Read(.env)", "/proj/a/b/.env", true),
        ("Read(*.pem)", "/anywhere/key.pem", true),
        ("Read(secrets)", "/proj/x/secrets/db.txt", true),
        ("Edit(src/**)", "/proj/src/main.rs", true),
    ];
    for (text, path, expected) in table {
        let write = text.starts_with("Edit");
        let tool = if write { "edit_file" } else { "read_file" };
        assert_eq!(
            rule(text).matches_path(tool, write, &[&PathBuf::from(path)]),
            expected,
            "{text} vs {path}"
        );
    }
    // Read rules cover every reading tool, Edit rules every writing tool.
    assert!(rule("Read(/src/**)").matches_path("grep", false, &[Path::new("/proj/src")]));
    assert!(rule("Edit(/src/**)").matches_path("write_file", true, &[Path::new("/proj/src/x")]));
    assert!(!rule("Edit(/src/**)").matches_path("read_file", false, &[Path::new("/proj/src/x")]));
    assert!(rule("Edit").matches_path("write_file", true, &[Path::new("/anywhere")]));
    assert!(rule("Read").matches_path("list_dir", false, &[Path::new("/anywhere")]));
    assert!(!rule("Read").matches_path("write_file", true, &[Path::new("/anywhere")]));
}

#[test]
fn relative_paths_are_anchored_at_the_working_directory_in_user_files_too() {
    // A rule of ~/.claude/settings.json: `/path` is the settings file's root (home), `path` and
    // `./path` the working directory (Claude Code's rule), `//` absolute, `~/` home.
    let anchors =
        Anchors { root: Path::new("/home/u"), cwd: Path::new("/work/app"), home: Some(Path::new("/home/u")) };
    let user = |text: &str| Rule::parse(text, RuleKind::Deny, "~/.claude/settings.json", anchors).unwrap();
    let table = [
        ("Read(config/prod.key)", "/work/app/config/prod.key", true),
        ("Read(config/prod.key)", "/home/u/config/prod.key", false),
        ("Read(./config/prod.key)", "/work/app/config/prod.key", true),
        ("Read(/notes/**)", "/home/u/notes/a.md", true),
        ("Read(/notes/**)", "/work/app/notes/a.md", false),
        ("Read(//etc/hosts)", "/etc/hosts", true),
        ("Read(~/.ssh/**)", "/home/u/.ssh/id_rsa", true),
        ("Read(prod.key)", "/work/app/config/prod.key", true),
    ];
    for (text, path, expected) in table {
        assert_eq!(
            user(text).matches_path("read_file", false, &[Path::new(path)]),
            expected,
            "{text} vs {path}"
        );
    }
}

#[test]
fn domains_mcp_and_names() {
    assert!(rule("WebFetch(domain:example.com)").matches_domain("example.com"));
    assert!(!rule("WebFetch(domain:example.com)").matches_domain("evil.com"));
    assert!(!rule("WebFetch(domain:example.com)").matches_domain("docs.example.com"), "no subdomains");
    assert!(rule("WebFetch(domain:*.example.com)").matches_domain("docs.example.com"));
    assert!(!rule("WebFetch(domain:*.example.com)").matches_domain("example.com"));
    assert!(!rule("WebFetch(domain:*.example.com)").matches_domain("badexample.com"));
    assert!(rule("WebFetch").matches_domain("anything.org"));
    // Only a rule naming the host itself opens a private address.
    assert!(rule("WebFetch(domain:127.0.0.1)").names_host("127.0.0.1"));
    assert!(rule("WebFetch(domain:[::1])").names_host("[::1]"));
    assert!(rule("WebFetch(domain:Intranet.Local)").names_host("intranet.local"));
    assert!(!rule("WebFetch(domain:*.local)").names_host("intranet.local"));
    assert!(!rule("WebFetch").names_host("127.0.0.1"));
    assert!(!rule("WebFetch(domain:127.0.0.1)").names_host("127.0.0.2"));
    assert!(rule("mcp__github").matches_tool("mcp__github__create_issue"));
    assert!(rule("mcp__github__create_issue").matches_tool("mcp__github__create_issue"));
    assert!(!rule("mcp__github__create_issue").matches_tool("mcp__github__delete_repo"));
    assert!(!rule("mcp__git").matches_tool("mcp__github__x"));
    assert!(rule("Glob").matches_tool("glob"));
    assert!(rule("Grep").matches_tool("grep"));
}

#[test]
fn malformed_rules_are_errors() {
    let anchors = Anchors { root: Path::new("/proj"), cwd: Path::new("/proj"), home: None };
    for text in ["", "Bash(git diff *", "Bash)", "Bash(a))", "WebFetch(example.com)", "Read([)", "Ba sh(x)"] {
        assert!(Rule::parse(text, RuleKind::Deny, "test", anchors).is_err(), "{text:?}");
    }
}

#[test]
fn only_memory_deny_rules_make_memory_check_entries() {
    let set = |texts: &[&str]| {
        let mut set = RuleSet::default();
        for text in texts {
            let mut found = rule(text);
            found.kind = RuleKind::Deny;
            set.rules.push(found);
        }
        set
    };
    assert!(!set(&[]).denies_memory());
    assert!(!set(&["Read(**)", "Bash(rm *)", "WebFetch(domain:x.com)", "mcp__memory"]).denies_memory());
    assert!(set(&["Memory(user/**)"]).denies_memory());
    assert!(set(&["Memory"]).denies_memory());
    let mut allow = set(&[]);
    allow.rules.push(rule("Memory(user/**)"));
    assert!(!allow.denies_memory(), "an allow rule denies nothing");
}
