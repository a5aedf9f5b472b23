//! Bad input: broken settings files and rules, huge commands, NUL bytes, invalid UTF-8. Each gets a
//! clear message and the safer decision; nothing panics and nothing else is affected.

use lathe_policy::settings::{load, settings_files};
use lathe_policy::{Access, PermissionMode, Policy, PolicyConfig, SandboxMode, Verdict};

use super::decisions::{Fixture, fixture};

fn policy_with(f: &Fixture, mode: PermissionMode) -> (Policy, Vec<String>) {
    let files = settings_files(Some(&f.home.join(".claude")), Some(&f.home), &f.lathe_home, &f.ws);
    let settings = load(&files, Some(&f.home));
    let problems = settings.problems.clone();
    let policy = Policy::new(PolicyConfig {
        protected_dirs: Vec::new(),
        mode,
        workspace: f.ws.clone(),
        home: Some(f.home.clone()),
        settings,
        protected: Vec::new(),
        plan_file: None,
        sandbox: SandboxMode::Off,
        network: Default::default(),
    });
    (policy, problems)
}

fn sh(policy: &Policy, f: &Fixture, command: &str) -> lathe_policy::Decision {
    policy.decide("shell", &Access::Execute { command: command.into(), cwd: f.ws.clone() })
}

#[test]
fn invalid_json_in_a_settings_file_is_reported_and_makes_changes_ask() {
    let f = fixture();
    std::fs::create_dir_all(f.ws.join(".claude")).expect("dir");
    std::fs::write(f.ws.join(".claude/settings.json"), "{\"permissions\": {\"deny\": [\"Bash(rm *)\",]}}")
        .expect("write");
    std::fs::create_dir_all(f.ws.join(".lathe")).expect("dir");
    std::fs::write(f.ws.join(".lathe/settings.json"), r#"{"permissions": {"deny": ["Bash(git push *)"]}}"#)
        .expect("write");
    let (policy, problems) = policy_with(&f, PermissionMode::Bypass);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains(".claude/settings.json") && problems[0].contains("not valid JSON"),
        "{}",
        problems[0]
    );
    // Its deny rules are unknown, so what would run without asking asks instead, even in bypass…
    let rm = sh(&policy, &f, "rm notes.txt");
    assert_eq!(rm.verdict, Verdict::Ask, "{rm:?}");
    assert!(rm.reason.contains(".claude/settings.json"), "{}", rm.reason);
    // …read-only commands still run, and the other files' rules still bind.
    assert_eq!(sh(&policy, &f, "ls -la").verdict, Verdict::Allow);
    assert_eq!(sh(&policy, &f, "git push").verdict, Verdict::Deny);
}

#[test]
fn malformed_rules_are_named_and_never_widen() {
    let f = fixture();
    std::fs::create_dir_all(f.ws.join(".lathe")).expect("dir");
    std::fs::write(
        f.ws.join(".lathe/settings.json"),
        r#"{"permissions": {"allow": ["Bash(cargo test *", "Bash(ls *)", 42], "deny": ["Bash(rm -rf *"]}}"#,
    )
    .expect("write");
    let (policy, problems) = policy_with(&f, PermissionMode::Default);
    let all = problems.join("\n");
    assert!(all.contains("`Bash(cargo test *`") && all.contains("dropped"), "{all}");
    assert!(all.contains("`Bash(rm -rf *`") && all.contains("unbalanced"), "{all}");
    assert!(all.contains("42 is not a string"), "{all}");
    assert!(problems.iter().all(|p| p.contains(".lathe/settings.json")), "{all}");
    // The broken allow is dropped: cargo test asks as if there were no rule.
    assert_eq!(sh(&policy, &f, "cargo test").verdict, Verdict::Ask);
    // The broken deny makes shell calls that are not read-only ask, even in bypass.
    let (bypass, _) = policy_with(&f, PermissionMode::Bypass);
    let decision = sh(&bypass, &f, "rm -rf build");
    assert_eq!(decision.verdict, Verdict::Ask, "{decision:?}");
    assert!(decision.reason.contains("Bash(rm -rf *"), "{}", decision.reason);
    assert_eq!(sh(&bypass, &f, "ls").verdict, Verdict::Allow);
}

#[test]
fn wrong_shapes_and_invalid_utf8_are_reported() {
    let f = fixture();
    std::fs::create_dir_all(f.ws.join(".claude")).expect("dir");
    std::fs::write(
        f.ws.join(".claude/settings.local.json"),
        b"{\"permissions\": {\"allow\": [\"Bash(\xff\xfe)\"]}}",
    )
    .expect("write");
    std::fs::create_dir_all(f.ws.join(".lathe")).expect("dir");
    std::fs::write(f.ws.join(".lathe/settings.local.json"), r#"{"permissions": {"deny": "Bash(rm *)"}}"#)
        .expect("write");
    let (policy, problems) = policy_with(&f, PermissionMode::Bypass);
    let all = problems.join("\n");
    assert!(all.contains("settings.local.json") && all.contains("not valid JSON"), "{all}");
    assert!(all.contains("permissions.deny is not an array"), "{all}");
    assert_eq!(sh(&policy, &f, "rm x").verdict, Verdict::Ask);
}

#[test]
fn huge_commands_nul_bytes_and_replacement_characters_ask_without_panicking() {
    let f = fixture();
    let (policy, _) = policy_with(&f, PermissionMode::Bypass);
    let huge = format!("echo {}", "a".repeat(1024 * 1024));
    let decision = sh(&policy, &f, &huge);
    assert_eq!(decision.verdict, Verdict::Ask);
    assert!(decision.reason.contains("bytes long"), "{}", decision.reason);
    let nul = sh(&policy, &f, "ls\0; rm -rf /");
    assert_eq!(nul.verdict, Verdict::Ask);
    assert!(nul.reason.contains("NUL"), "{}", nul.reason);
    let lossy = String::from_utf8_lossy(b"cat \xff\xfe.txt").into_owned();
    assert_eq!(sh(&policy, &f, &lossy).verdict, Verdict::Allow);
    let garbage = String::from_utf8_lossy(b"\xff\xfe $( \x80 ").into_owned();
    assert_eq!(sh(&policy, &f, &garbage).verdict, Verdict::Ask);
    // The same policy keeps deciding afterwards.
    assert_eq!(sh(&policy, &f, "ls").verdict, Verdict::Allow);
}
