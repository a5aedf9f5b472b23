//! What the sandbox says about itself: which backend runs and why the first choice did not (a
//! `bwrap` on `PATH` that fails the way a locked-down kernel or container makes it fail), the state
//! in `init`, the network policy in the shell tool's description, and the refusal of a connection.

use std::os::unix::fs::PermissionsExt;

use super::*;

/// A `bwrap` first on `PATH` that prints `line` and fails, when `when` is among its arguments
/// (`""`: always); otherwise it runs the real one.
fn failing_bwrap(p: &Project, line: &str, when: &str) -> std::ffi::OsString {
    let real = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join("bwrap")).find(|p| p.is_file()))
        .expect("bubblewrap is not installed: run scripts/install-build-deps.sh");
    let dir = p.out.join("fake-bin");
    std::fs::create_dir_all(&dir).expect("bin");
    let script = format!(
        "#!/bin/sh\ncase \" $* \" in *\"{when}\"*) echo '{line}' >&2; exit 1;; esac\nexec {} \"$@\"\n",
        real.display()
    );
    std::fs::write(dir.join("bwrap"), script).expect("fake bwrap");
    std::fs::set_permissions(dir.join("bwrap"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&path))).expect("PATH")
}

fn warnings(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "warning")
        .map(|l| l["message"].as_str().unwrap_or("").to_string())
        .collect()
}

fn init_sandbox(lines: &[Value]) -> String {
    let init = lines.iter().find(|l| l["type"] == "init").expect("an init line");
    init["sandbox"].as_str().unwrap_or("").to_string()
}

/// Whether Lathe fell back to Landlock (`init`'s sandbox line); a kernel without it has no
/// backend once bubblewrap fails, which the second half of each test covers.
fn fell_back_to_landlock(sandbox: &str) -> bool {
    if sandbox.contains("landlock") {
        return true;
    }
    assert!(sandbox.contains("no backend"), "{sandbox}");
    eprintln!("SKIPPED the Landlock half: this kernel has no Landlock ({sandbox})");
    false
}

#[tokio::test]
async fn a_bwrap_that_cannot_start_is_named_with_its_error_and_fix_once_and_init_says_what_runs() {
    let p = project();
    let path = failing_bwrap(&p, "bwrap: setting up uid map: Permission denied", "");
    settings(&p, ".lathe/settings.json", json!({"permissions": {"allow": ["Bash(touch *)"]}}));
    let server = scripted(vec![shell("c1", "touch made.txt"), shell("c2", "touch again.txt")]).await;
    let mut run = lathe(&p, &server, &["-p", "go"]);
    run.env("PATH", &path);
    let out = output(run).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = lines(&out);
    let warned = warnings(&seen);
    let sandbox = init_sandbox(&seen);
    if fell_back_to_landlock(&sandbox) {
        assert!(sandbox.starts_with("workspace-write, network off, landlock"), "{sandbox}");
        let about: Vec<&String> = warned.iter().filter(|w| w.contains("Landlock")).collect();
        assert_eq!(about.len(), 1, "{warned:?}");
        assert!(about[0].contains("setting up uid map: Permission denied"), "{}", about[0]);
        assert!(about[0].contains("apparmor_restrict_unprivileged_userns"), "{}", about[0]);
        assert_eq!(statuses(&seen)[0].1, "completed");
        assert!(p.ws.join("made.txt").exists());
        let description = tool_description(&server, "shell");
        assert!(description.contains("Sandbox (Landlock)"), "{description}");
    }
    // With only bubblewrap allowed, there is no backend: the advice fits bwrap's failure.
    let server = scripted(vec![shell("c1", "touch made.txt")]).await;
    let mut run = lathe(&p, &server, &["-p", "go"]);
    run.env("PATH", &path).env("LATHE_SANDBOX_BACKEND", "bwrap");
    let out = output(run).await;
    let seen = lines(&out);
    assert!(init_sandbox(&seen).contains("no backend"), "{}", init_sandbox(&seen));
    let warned = warnings(&seen);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].contains("uid map") && warned[0].contains("AppArmor"), "{}", warned[0]);
    assert!(!warned[0].contains("install bubblewrap"), "bubblewrap is installed: {}", warned[0]);
}

#[tokio::test]
async fn the_probe_matches_the_network_policy() {
    let p = project();
    // A machine that cannot make a network namespace, but can make the rest.
    let path =
        failing_bwrap(&p, "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted", "--unshare-net");
    std::fs::write(
        p.lathe_home.join("config.toml"),
        "[retry]\nmax_retries = 0\n[sandbox]\nnetwork = \"on\"\n",
    )
    .expect("config");
    let server = scripted(vec![shell("c1", "echo hi")]).await;
    let mut run = lathe(&p, &server, &["-p", "go"]);
    run.env("PATH", &path);
    let out = output(run).await;
    let seen = lines(&out);
    assert_eq!(init_sandbox(&seen), "workspace-write, network on, bubblewrap");
    assert!(warnings(&seen).is_empty(), "{:?}", warnings(&seen));
    let description = tool_description(&server, "shell");
    assert!(description.contains("network on"), "{description}");

    std::fs::write(p.lathe_home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    let server = scripted(vec![shell("c1", "echo hi")]).await;
    let mut run = lathe(&p, &server, &["-p", "go"]);
    run.env("PATH", &path);
    let seen = lines(&output(run).await);
    if fell_back_to_landlock(&init_sandbox(&seen)) {
        assert!(init_sandbox(&seen).contains("network off, landlock"), "{}", init_sandbox(&seen));
        let warned = warnings(&seen);
        assert!(
            warned.iter().any(|w| w.contains("RTM_NEWADDR") && w.contains("network = \"on\"")),
            "{warned:?}"
        );
    }
}

/// The description of tool `name` in the first request the server received.
fn tool_description(server: &MockServer, name: &str) -> String {
    let requests = server.requests();
    let body = &requests[0].body;
    let tool = body["tools"].as_array().and_then(|tools| tools.iter().find(|t| t["name"] == name)).cloned();
    tool.and_then(|t| t["description"].as_str().map(str::to_string)).unwrap_or_default()
}

#[tokio::test]
async fn a_connection_the_sandbox_refuses_says_so_and_how_to_allow_it() {
    let p = project();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    settings(&p, ".lathe/settings.json", json!({"permissions": {"allow": ["Bash(bash probe.sh)"]}}));
    std::fs::write(p.ws.join("probe.sh"), format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected\n"))
        .expect("probe");
    let server = scripted(vec![shell("c1", "bash probe.sh")]).await;
    let out = output(lathe(&p, &server, &["-p", "go"])).await;
    let seen = lines(&out);
    assert!(init_sandbox(&seen).contains("network off"), "{}", init_sandbox(&seen));
    let description = tool_description(&server, "shell");
    assert!(description.contains("NO network"), "{description}");
    let shown = output_of(&seen, "c1");
    if init_sandbox(&seen).ends_with("bubblewrap") {
        assert!(!shown.contains("connected"), "{shown}");
        assert!(shown.contains("the sandbox refused the network"), "{shown}");
        assert!(shown.contains("network = \"on\""), "{shown}");
    }
}
