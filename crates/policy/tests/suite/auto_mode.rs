//! Mode `auto`: the tiers before the reviewer. Deny rules deny, ask rules ask a person, read-only
//! calls and edits inside the workspace are allowed, and everything else that would ask is marked
//! for the reviewer (`Decision::review`), the hard limits included.

use std::path::Path;

use lathe_policy::{Access, PermissionMode, Verdict};

use super::decisions::{fixture, policy};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

#[test]
fn auto_mode_reviews_only_what_would_ask() {
    let f = fixture();
    write(
        &f.ws.join(".lathe/settings.json"),
        r#"{"permissions": {"deny": ["Bash(git push *)"], "ask": ["Bash(git commit *)"]}}"#,
    );
    let policy = policy(&f, PermissionMode::Auto);
    let sh = |command: &str| {
        policy.decide("shell", &Access::Execute { command: command.into(), cwd: f.ws.clone() })
    };
    let allowed = |decision: lathe_policy::Decision| decision.verdict == Verdict::Allow && !decision.review;
    let reviewed = |decision: lathe_policy::Decision| decision.verdict == Verdict::Ask && decision.review;
    assert!(allowed(sh("git status")), "read-only command");
    assert!(allowed(policy.decide("read_file", &Access::Read(vec![f.ws.join("src/lib.rs")]))));
    let edit = policy.decide("edit_file", &Access::Write(vec![f.ws.join("src/lib.rs")]));
    assert!(allowed(edit.clone()), "{edit:?}");
    assert_eq!(edit.by, "mode auto (an edit inside the workspace)");
    assert!(reviewed(sh("touch made.txt")), "a command that is not read-only");
    assert!(reviewed(sh("rm -rf ~/notes")), "the destructive-command check");
    assert!(reviewed(policy.decide("write_file", &Access::Write(vec![f.out.join("x.txt")]))), "outside");
    assert!(reviewed(policy.decide("read_file", &Access::Read(vec![f.out.join("x.txt")]))), "read outside");
    assert!(reviewed(policy.decide("mcp__x__write", &Access::Undeclared { read_only: false })));
    assert!(reviewed(policy.decide("task", &Access::Undeclared { read_only: true })), "a sub-agent spawn");
    assert!(allowed(policy.decide("mcp__x__read", &Access::Undeclared { read_only: true })));
    let denied = sh("git push --force origin main");
    assert_eq!(denied.verdict, Verdict::Deny, "deny rules bind: {denied:?}");
    let asked = sh("git commit -m x");
    assert_eq!((asked.verdict, asked.review), (Verdict::Ask, false), "an ask rule asks a person: {asked:?}");
    assert_eq!(sh("touch y").summary(), "review (mode auto)");
    // The user's memory is every project's: its writes are reviewed; a project's memory is an edit.
    let memory = |path: &str| policy.decide("memory", &Access::Memory { path: path.into(), write: true });
    assert!(reviewed(memory("user/pref.md")), "user memory");
    assert_eq!(memory("project/notes.md").by, "mode auto (a project memory write)");
}
