//! Memory calls are their own kind of access (`Access::Memory`): reads are allowed, writes go to
//! the mode as edits, and `Memory` / `Memory(project/**)` rules bind in user and project settings.

use std::path::Path;

use lathe_policy::settings::{load, settings_files};
use lathe_policy::{Access, PermissionMode, Policy, PolicyConfig, Verdict};

use super::decisions::{fixture, policy};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

fn verdict(policy: &Policy, path: &str, write: bool) -> Verdict {
    policy.decide("memory", &Access::Memory { path: path.into(), write }).verdict
}

#[test]
fn memory_writes_follow_the_mode_as_edits_and_reads_are_allowed() {
    let f = fixture();
    let expected = [
        (PermissionMode::Default, Verdict::Ask),
        (PermissionMode::AcceptEdits, Verdict::Allow),
        (PermissionMode::Bypass, Verdict::Allow),
        (PermissionMode::Plan, Verdict::Deny),
        (PermissionMode::DontAsk, Verdict::Deny),
    ];
    for (mode, want) in expected {
        let policy = policy(&f, mode);
        assert_eq!(verdict(&policy, "project/pnpm.md", true), want, "{mode}");
        assert_eq!(verdict(&policy, "project/pnpm.md", false), Verdict::Allow, "{mode} read");
    }
    let headless = policy(&f, PermissionMode::Default)
        .decide("memory", &Access::Memory { path: "project/pnpm.md".into(), write: true })
        .headless();
    assert_eq!(headless.verdict, Verdict::Deny);
    assert!(headless.reason.contains("Memory(project/pnpm.md)"), "{}", headless.reason);
}

#[test]
fn memory_rules_bind_from_user_and_project_settings() {
    let f = fixture();
    write(
        &f.lathe_home.join("settings.json"),
        r#"{"permissions": {"allow": ["Memory(project/**)"], "deny": ["Memory(user/secrets/**)"]}}"#,
    );
    write(&f.ws.join(".lathe/settings.json"), r#"{"permissions": {"ask": ["Memory(project/ask.md)"]}}"#);
    let policy = policy(&f, PermissionMode::Bypass);
    assert_eq!(verdict(&policy, "project/pnpm.md", true), Verdict::Allow);
    assert_eq!(verdict(&policy, "user/secrets/x.md", true), Verdict::Deny);
    assert_eq!(verdict(&policy, "user/secrets/x.md", false), Verdict::Deny, "a deny binds reads too");
    assert_eq!(verdict(&policy, "project/ask.md", true), Verdict::Ask);
    let default = self::policy(&f, PermissionMode::Default);
    assert_eq!(verdict(&default, "project/deep/a.md", true), Verdict::Allow);
    assert_eq!(verdict(&default, "user/prefs.md", true), Verdict::Ask);
}

#[test]
fn a_bare_memory_deny_binds_in_bypass() {
    let f = fixture();
    write(&f.home.join(".claude/settings.json"), r#"{"permissions": {"deny": ["Memory"]}}"#);
    let files = settings_files(Some(&f.home.join(".claude")), Some(&f.home), &f.lathe_home, &f.ws);
    let settings = load(&files, Some(&f.home));
    let policy = Policy::new(PolicyConfig {
        mode: PermissionMode::Bypass,
        workspace: f.ws.clone(),
        home: Some(f.home.clone()),
        settings,
        ..PolicyConfig::default()
    });
    let decision = policy.decide("memory", &Access::Memory { path: "project/a.md".into(), write: true });
    assert_eq!(decision.verdict, Verdict::Deny);
    assert!(decision.by.contains("`Memory`"), "{}", decision.by);
}

#[test]
fn a_project_allow_rule_never_allows_the_users_memory() {
    let f = fixture();
    for name in [".lathe/settings.json", ".claude/settings.json", ".lathe/settings.local.json"] {
        write(&f.ws.join(name), r#"{"permissions": {"allow": ["Memory", "Memory(user/**)"]}}"#);
    }
    let policy = policy(&f, PermissionMode::Default);
    assert_eq!(verdict(&policy, "project/a.md", true), Verdict::Allow, "the project's own memory");
    assert_eq!(
        verdict(&policy, "user/prefs.md", true),
        Verdict::Ask,
        "a repository cannot allow user memory"
    );
    let headless =
        policy.decide("memory", &Access::Memory { path: "user/prefs.md".into(), write: true }).headless();
    assert_eq!(headless.verdict, Verdict::Deny);
    assert!(headless.reason.contains("cannot allow user memory"), "{}", headless.reason);
    write(&f.lathe_home.join("settings.json"), r#"{"permissions": {"allow": ["Memory(user/**)"]}}"#);
    let policy = self::policy(&f, PermissionMode::Default);
    assert_eq!(verdict(&policy, "user/prefs.md", true), Verdict::Allow, "the user's own settings can");
}
