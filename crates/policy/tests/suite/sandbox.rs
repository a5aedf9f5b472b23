//! The OS sandbox on this machine: real `bash` inside bubblewrap (or Landlock). Where the kernel
//! cannot sandbox, the tests assert the fallback (commands that are not read-only ask), never a
//! silent pass.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use lathe_policy::sandbox::{Backend, Sandbox, backend};
use lathe_policy::settings::Loaded;
use lathe_policy::{Access, NetworkAccess, PermissionMode, Policy, PolicyConfig, SandboxMode, Verdict};

use super::decisions::fixture;

fn run(sandbox: &Sandbox, script: &str, cwd: &Path) -> Output {
    let args = [OsStr::new("-c"), OsStr::new(script)];
    sandbox.command("bash", &args, cwd).stdin(std::process::Stdio::null()).output().expect("spawn")
}

/// The backend, or — when the kernel cannot sandbox — proof that the policy falls back to asking,
/// and a loud skip on stderr. Under CI (`CI` set), where scripts/install-build-deps.sh installed
/// bubblewrap, a missing backend fails the test instead: the sandbox tests must run there.
fn backend_or_fallback() -> Option<&'static Backend> {
    let bwrap_installed = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("bwrap").is_file()));
    assert!(bwrap_installed, "bubblewrap is not installed: run scripts/install-build-deps.sh");
    match backend(NetworkAccess::Off) {
        Ok(backend) => Some(backend),
        Err(why) => {
            let f = fixture();
            let mut settings = Loaded::default();
            settings.rules.rules.push(
                lathe_policy::rules::Rule::parse(
                    "Bash(touch *)",
                    lathe_policy::rules::RuleKind::Allow,
                    "test",
                    lathe_policy::rules::Anchors { root: &f.ws, cwd: &f.ws, home: None },
                )
                .expect("rule"),
            );
            let policy = Policy::new(PolicyConfig {
                mode: PermissionMode::Default,
                workspace: f.ws.clone(),
                settings,
                sandbox: SandboxMode::WorkspaceWrite,
                ..PolicyConfig::default()
            });
            let touch =
                policy.decide("shell", &Access::Execute { command: "touch x".into(), cwd: f.ws.clone() });
            assert_eq!(
                touch.verdict,
                Verdict::Ask,
                "no sandbox ({why}) but an allowed change ran: {touch:?}"
            );
            assert!(touch.reason.contains("no OS sandbox"), "{}", touch.reason);
            let ls = policy.decide("shell", &Access::Execute { command: "ls".into(), cwd: f.ws.clone() });
            assert_eq!(ls.verdict, Verdict::Allow);
            assert!(
                std::env::var_os("CI").is_none(),
                "CI installs bubblewrap, yet no sandbox backend works here: {why}"
            );
            eprintln!(
                "SKIPPED: no OS sandbox backend works on this machine ({why}); only the fallback was tested"
            );
            None
        }
    }
}

#[test]
fn workspace_write_confines_writes_to_the_workspace_and_keeps_git_hooks_and_config_read_only() {
    let Some(_) = backend_or_fallback() else { return };
    let f = fixture();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).expect("git dir");
    std::fs::write(f.ws.join(".git/config"), "[core]\n").expect("config");
    let sandbox = Sandbox::new(SandboxMode::WorkspaceWrite, NetworkAccess::Off, vec![f.ws.clone()]);
    let inside = run(&sandbox, "echo ok > ./x && cat ./x", &f.ws);
    assert!(inside.status.success(), "{inside:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join("x")).expect("x"), "ok\n");
    let home = run(&sandbox, &format!("echo no > {}/x", f.home.display()), &f.ws);
    assert!(!home.status.success(), "{home:?}");
    assert!(!f.home.join("x").exists());
    let watch = sandbox.watch_git();
    let git = run(
        &sandbox,
        "touch .git/hooks/pre-commit; echo x >> .git/config; touch .git/index .git/planted",
        &f.ws,
    );
    let removed = watch.settle();
    if matches!(backend(NetworkAccess::Off), Ok(Backend::Bubblewrap(_))) {
        assert_eq!(
            String::from_utf8_lossy(&git.stderr).matches("Read-only file system").count(),
            2,
            "{git:?}"
        );
        assert!(!f.ws.join(".git/hooks/pre-commit").exists());
        assert_eq!(std::fs::read_to_string(f.ws.join(".git/config")).expect("config"), "[core]\n");
        // What a commit writes stays; a name git does not write is removed after the command.
        assert!(f.ws.join(".git/index").exists());
        assert!(!f.ws.join(".git/planted").exists(), "{removed:?}");
        assert_eq!(removed.len(), 1, "{removed:?}");
    }
}

#[test]
fn read_only_blocks_writes_in_the_workspace() {
    let Some(_) = backend_or_fallback() else { return };
    let f = fixture();
    let sandbox = Sandbox::new(SandboxMode::ReadOnly, NetworkAccess::Off, vec![f.ws.clone()]);
    let out = run(&sandbox, "touch ./x", &f.ws);
    assert!(!out.status.success(), "{out:?}");
    assert!(!f.ws.join("x").exists());
    let read = run(&sandbox, "ls / > /dev/null && echo readable", &f.ws);
    assert!(String::from_utf8_lossy(&read.stdout).contains("readable"), "{read:?}");
}

#[test]
fn network_off_cannot_reach_a_listener_on_loopback() {
    let Some(_) = backend_or_fallback() else { return };
    let f = fixture();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let open = Sandbox::new(SandboxMode::WorkspaceWrite, NetworkAccess::On, vec![f.ws.clone()]);
    let reached = run(&open, &connect, &f.ws);
    assert!(String::from_utf8_lossy(&reached.stdout).contains("connected"), "network on: {reached:?}");
    let closed = Sandbox::new(SandboxMode::WorkspaceWrite, NetworkAccess::Off, vec![f.ws.clone()]);
    let blocked = run(&closed, &connect, &f.ws);
    assert!(!blocked.status.success(), "network off: {blocked:?}");
    assert!(!String::from_utf8_lossy(&blocked.stdout).contains("connected"));
}

#[test]
fn a_hidden_directory_is_empty_to_commands_and_closed_to_file_tools_except_the_workspace_inside_it() {
    let Some(_) = backend_or_fallback() else { return };
    if !matches!(backend(NetworkAccess::Off), Ok(Backend::Bubblewrap(_))) {
        eprintln!("SKIPPED: only bubblewrap hides directories");
        return;
    }
    let f = fixture();
    // The workspace inside the hidden root, a sibling beside it.
    let root = f.out.join("batch");
    let (own, sibling) = (root.join("a/ws"), root.join("b/ws"));
    for dir in [&own, &sibling] {
        std::fs::create_dir_all(dir).expect("dirs");
    }
    std::fs::write(sibling.join("planted.txt"), "SECRET\n").expect("planted");
    std::fs::write(own.join("mine.txt"), "mine\n").expect("mine");
    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::ReadOnly] {
        let sandbox = Sandbox::new(mode, NetworkAccess::Off, vec![own.clone()]).hiding(vec![root.clone()]);
        let seen = run(
            &sandbox,
            &format!("cat mine.txt; ls {}; cat {}/planted.txt", root.display(), sibling.display()),
            &own,
        );
        let stdout = String::from_utf8_lossy(&seen.stdout);
        assert!(stdout.starts_with("mine\na\n"), "{mode:?}: {seen:?}");
        assert!(!stdout.contains('b') && !stdout.contains("SECRET"), "{mode:?}: {seen:?}");
    }
    let writable = Sandbox::new(SandboxMode::WorkspaceWrite, NetworkAccess::Off, vec![own.clone()])
        .hiding(vec![root.clone()]);
    assert!(run(&writable, "echo ok > ./x", &own).status.success());
    assert_eq!(std::fs::read_to_string(own.join("x")).expect("x"), "ok\n");

    let policy = Policy::new(PolicyConfig {
        mode: PermissionMode::Bypass,
        workspace: own.clone(),
        ..PolicyConfig::default()
    })
    .hiding(std::slice::from_ref(&root));
    let read = policy.decide("read_file", &Access::Read(vec![sibling.join("planted.txt")]));
    assert_eq!(read.verdict, Verdict::Deny, "{read:?}");
    let write = policy.decide("write_file", &Access::Write(vec![sibling.join("new.txt")]));
    assert_eq!(write.verdict, Verdict::Deny, "{write:?}");
    let own_read = policy.decide("read_file", &Access::Read(vec![own.join("mine.txt")]));
    assert_eq!(own_read.verdict, Verdict::Allow, "{own_read:?}");
}
