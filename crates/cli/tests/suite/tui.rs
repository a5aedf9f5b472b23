//! The terminal UI end to end: the real binary in a tmux pane against `lathe-mock`, driven by
//! keystrokes, checked by what the pane shows, the files and processes left behind, and the
//! session file.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use lathe_mock::{MockServer, Mode, Script};
use serde_json::{Value, json};

use super::tmux::{Tmux, wait_until};

pub(super) const WAIT: Duration = Duration::from_secs(20);

pub(super) struct Setup {
    pub(super) tmp: tempfile::TempDir,
    pub(super) home: PathBuf,
    pub(super) workspace: PathBuf,
    /// Set in the environment of lathe (and so of every command it runs).
    pub(super) mark: String,
}

pub(super) fn setup() -> Setup {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let workspace = tmp.path().join("ws");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&workspace).expect("ws");
    std::fs::write(home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    let name = tmp.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mark = format!("e2e-{}-{name}", std::process::id());
    Setup { tmp, home, workspace, mark }
}

pub(super) async fn scripted(turns: Value) -> MockServer {
    let script = Script::from_json(&json!({ "turns": turns }).to_string()).expect("script");
    MockServer::start(Mode::Scripted(script)).await.expect("mock")
}

/// What the pane script prints after lathe's exit status and the terminal's settings (`stty -a`):
/// waiting for it waits for both.
pub(super) const SETTINGS_END: &str = "end of terminal settings";

/// A script for the pane: lathe with `args`, then its exit status and the terminal's modes, then
/// an idle wait so the pane stays open to be read.
pub(super) fn pane_script(setup: &Setup, server: &MockServer, args: &[&str]) -> PathBuf {
    pane_script_named(setup, server, args, "pane.sh")
}

/// [`pane_script`] written to the file `name` (a second run of lathe in the same setup).
fn pane_script_named(setup: &Setup, server: &MockServer, args: &[&str], name: &str) -> PathBuf {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
    let script = format!(
        "#!/bin/sh\nexport LATHE_HOME={home}\nexport LATHE_E2E_MARK={mark}\nunset ANTHROPIC_API_KEY OPENAI_API_KEY \
         LATHE_PROVIDER LATHE_MODEL LATHE_PERMISSION_MODE\ncd {ws}\n{lathe} --provider anthropic --base-url {url} {args}\n\
         echo \"lathe exited with status $?\"\nstty -a\necho '{SETTINGS_END}'\nexec sleep 600\n",
        home = quote(&setup.home.display().to_string()),
        mark = setup.mark,
        ws = quote(&setup.workspace.display().to_string()),
        lathe = quote(env!("CARGO_BIN_EXE_lathe")),
        url = quote(&server.url()),
        args = args.join(" "),
    );
    let path = setup.tmp.path().join(name);
    std::fs::write(&path, script).expect("script");
    let status = Command::new("chmod").arg("+x").arg(&path).status().expect("chmod");
    assert!(status.success());
    path
}

/// The session files under `home`.
fn session_files(home: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(projects) = std::fs::read_dir(home.join("sessions")) else { return files };
    for project in projects.flatten() {
        for entry in std::fs::read_dir(project.path()).into_iter().flatten().flatten() {
            if entry.path().extension().is_some_and(|e| e == "jsonl") {
                files.push(entry.path());
            }
        }
    }
    files
}

/// Pids of processes whose command line is exactly `argv` and whose environment carries `mark`.
fn marked_processes(argv: &[&str], mark: &str) -> Vec<u32> {
    let wanted: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let needle = format!("LATHE_E2E_MARK={mark}");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if cmdline != wanted {
            continue;
        }
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

/// Lines of `stty -a` output in the capture, joined.
fn stty_flags(capture: &str) -> String {
    let after = capture.split("lathe exited with status").nth(1).unwrap_or("");
    after.split(SETTINGS_END).next().unwrap_or("").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_runs_tools_asks_before_a_command_and_leaves_the_transcript() {
    let setup = setup();
    std::fs::write(setup.workspace.join("notes.txt"), "ship on friday\n").expect("notes");
    let server = scripted(json!([
        {"text": "Reading the notes.", "tool_calls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"tool_calls": [{"id": "call_shell", "name": "shell", "arguments": {"command": "echo shipped > status.txt"}}]},
        {"text": "All done: status.txt says **shipped**.", "text_chunks": 4}
    ]))
    .await;
    let script = pane_script(&setup, &server, &[]);
    let server = std::sync::Arc::new(server);
    let requests = {
        let server = server.clone();
        move || server.requests().len()
    };
    let workspace = setup.workspace.clone();
    let home = setup.home.clone();
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("ship it");
        pane.keys(&["Enter"]);

        // The read-only call ran without a question; the command asks.
        let shown = pane.wait_for("Run this command?", WAIT);
        assert!(shown.contains("read_file notes.txt"), "{shown}");
        assert!(shown.contains("echo shipped > status.txt"), "{shown}");
        assert_eq!(requests(), 2, "the read result went back to the model without asking");
        assert!(!workspace.join("status.txt").exists(), "nothing runs before the answer");

        pane.keys(&["y"]);
        pane.wait_for("All done: status.txt says shipped.", WAIT);
        assert_eq!(std::fs::read_to_string(workspace.join("status.txt")).ok().as_deref(), Some("shipped\n"));

        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 0"), "{after}");
        let transcript = after.split("lathe exited with status").next().unwrap_or("");
        for line in ["› ship it", "read_file notes.txt", "shell echo shipped > status.txt", "All done"] {
            assert!(transcript.contains(line), "`{line}` stays in the terminal after exit:\n{after}");
        }
        let modes = stty_flags(&after);
        let words: Vec<&str> = modes.split_whitespace().collect();
        assert!(words.contains(&"icanon") && words.contains(&"echo"), "canonical mode with echo:\n{modes}");

        let files = session_files(&home);
        assert_eq!(files.len(), 1, "{files:?}");
        let ledger = std::fs::read_to_string(&files[0]).expect("session file");
        assert!(ledger.contains("All done: status.txt says **shipped**."), "{ledger}");
    })
    .await
    .expect("scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_asks_with_the_diff_of_the_file_on_disk() {
    let setup = setup();
    std::fs::create_dir_all(setup.workspace.join("src")).expect("src");
    let before = "fn one() {}\n\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
    std::fs::write(setup.workspace.join("src/lib.rs"), before).expect("lib.rs");
    let server = scripted(json!([
        {"tool_calls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "src/lib.rs"}}]},
        {"tool_calls": [{"id": "call_edit", "name": "edit_file",
                         "arguments": {"path": "src/lib.rs", "old_string": "a + b", "new_string": "b + a"}}]},
        {"text": "Swapped."}
    ]))
    .await;
    let script = pane_script(&setup, &server, &[]);
    let workspace = setup.workspace.clone();
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("swap the operands");
        pane.keys(&["Enter"]);

        // The edit tool's preview: the file's own line numbers, with context from the file.
        let shown = pane.wait_for("Edit this file?", WAIT);
        assert!(shown.contains("src/lib.rs"), "{shown}");
        for row in ["3   pub fn add(a: i32, b: i32) -> i32 {", "4 -     a + b", "4 +     b + a", "5   }"] {
            assert!(shown.contains(row), "`{row}` in the dialog:\n{shown}");
        }
        assert!(!shown.contains("\"old_string\""), "the arguments are not shown as JSON:\n{shown}");
        assert!(!shown.contains("No newline at end of file"), "the file's own diff:\n{shown}");
        let unchanged = std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap_or_default();
        assert!(unchanged.contains("a + b"), "nothing is written before the answer");

        pane.keys(&["y"]);
        pane.wait_for("Swapped.", WAIT);
        let after = std::fs::read_to_string(workspace.join("src/lib.rs")).unwrap_or_default();
        assert!(after.contains("    b + a\n"), "{after}");
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        pane.wait_for(SETTINGS_END, WAIT);
    })
    .await
    .expect("scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_that_would_fail_its_own_checks_is_answered_at_once_without_a_dialog() {
    let setup = setup();
    std::fs::write(setup.workspace.join("app.py"), "print('hi')\n").expect("app.py");
    std::fs::write(setup.workspace.join("seen.py"), "x = 1\n").expect("seen.py");
    let edit = |id: &str, path: &str, old: &str| json!({"id": id, "name": "edit_file", "arguments": {"path": path, "old_string": old, "new_string": "changed"}});
    let server = scripted(json!([
        // Never read in this session.
        {"tool_calls": [edit("call_unread", "app.py", "print('hi')")]},
        // Read, but old_string is not in it.
        {"tool_calls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "seen.py"}}]},
        {"tool_calls": [edit("call_missing", "seen.py", "y = 2")]},
        {"text": "Gave up."}
    ]))
    .await;
    let script = pane_script(&setup, &server, &[]);
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("edit them");
        pane.keys(&["Enter"]);
        let shown = pane.wait_for("Gave up.", WAIT);
        assert!(!shown.contains("Edit this file?"), "{shown}");
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        pane.wait_for(SETTINGS_END, WAIT);
    })
    .await
    .expect("scenario");
    assert_eq!(std::fs::read_to_string(setup.workspace.join("app.py")).unwrap_or_default(), "print('hi')\n");
    let requests = server.requests();
    let unread = requests[1].body["messages"].to_string();
    assert!(unread.contains("has not been read in this session"), "{unread}");
    let missing = requests[3].body["messages"].to_string();
    assert!(missing.contains("old_string was not found in seen.py"), "{missing}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_running_command_and_the_next_prompt_is_answered() {
    let setup = setup();
    let server = scripted(json!([
        {"tool_calls": [{"id": "call_sleep", "name": "shell", "arguments": {"command": "sleep 30"}}]},
        {"text": "Still here."}
    ]))
    .await;
    let script = pane_script(&setup, &server, &["--yolo"]);
    let mark = setup.mark.clone();
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · bypass", WAIT);
        pane.type_text("wait for it");
        pane.keys(&["Enter"]);
        pane.wait_for("shell sleep 30", WAIT);
        wait_until(WAIT, "the sleep process", || !marked_processes(&["sleep", "30"], &mark).is_empty());

        let pressed = Instant::now();
        pane.keys(&["C-c"]);
        pane.wait_for("Interrupted", WAIT);
        pane.type_text("are you there?");
        pane.keys(&["Enter"]);
        let answered =
            pane.wait_until(Duration::from_secs(3).saturating_sub(pressed.elapsed()), "the answer", |text| {
                text.contains("Still here.")
            });
        assert!(answered.contains("shell sleep 30 · interrupted"), "{answered}");
        assert_eq!(
            marked_processes(&["sleep", "30"], &mark),
            Vec::<u32>::new(),
            "the command's process is gone"
        );

        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bang_command_runs_beside_the_prompts_ctrl_c_kills_it_and_its_output_reaches_the_model() {
    let setup = setup();
    let server = scripted(json!([{"text": "First answer."}, {"text": "Second answer."}])).await;
    let script = pane_script(&setup, &server, &[]);
    let mark = setup.mark.clone();
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5", WAIT);
        pane.type_text("!echo made-by-$((40+2))");
        pane.keys(&["Enter"]);
        pane.wait_for("made-by-42", WAIT);

        pane.type_text("!sleep 30; echo never-printed");
        pane.keys(&["Enter"]);
        wait_until(WAIT, "the sleep process", || !marked_processes(&["sleep", "30"], &mark).is_empty());
        // A prompt sent while the command runs is answered now.
        pane.type_text("meanwhile?");
        pane.keys(&["Enter"]);
        pane.wait_for("First answer.", WAIT);
        assert!(!marked_processes(&["sleep", "30"], &mark).is_empty(), "the command still runs");

        pane.keys(&["C-c"]);
        wait_until(WAIT, "the sleep to end", || marked_processes(&["sleep", "30"], &mark).is_empty());
        let killed = pane.wait_for("└ killed", WAIT);
        assert!(!killed.contains("└ never-printed"), "{killed}");
        pane.type_text("and now?");
        pane.keys(&["Enter"]);
        pane.wait_for("Second answer.", WAIT);

        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("scenario");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].body["messages"].to_string();
    assert!(first.contains("I ran a shell command myself") && first.contains("made-by-42"), "{first}");
    assert!(first.contains("meanwhile?") && !first.contains("sleep 30"), "{first}");
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("`sleep 30; echo never-printed` (killed)"), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_without_an_id_picks_an_earlier_session_and_continues_it() {
    let setup = setup();
    let server = scripted(json!([{"text": "Noted: 42."}, {"text": "It was 42."}])).await;
    let earlier = Command::new(env!("CARGO_BIN_EXE_lathe"))
        .args(["-p", "remember the number 42", "--provider", "anthropic", "--base-url", &server.url()])
        .current_dir(&setup.workspace)
        .env("LATHE_HOME", &setup.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("headless run");
    assert_eq!(earlier.status.code(), Some(0), "{}", String::from_utf8_lossy(&earlier.stderr));
    let script = pane_script(&setup, &server, &["--resume"]);
    let server = std::sync::Arc::new(server);
    let seen = server.clone();
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("Resume a session", WAIT);
        pane.wait_for("remember the number 42", WAIT);
        pane.keys(&["Enter"]);
        pane.wait_for("Resumed session", WAIT);
        pane.type_text("what was it?");
        pane.keys(&["Enter"]);
        pane.wait_for("It was 42.", WAIT);
        let sent = seen.requests().last().map(|r| r.body["messages"].to_string()).unwrap_or_default();
        assert!(sent.contains("remember the number 42") && sent.contains("what was it?"), "{sent}");
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_megabyte_paste_is_refused_and_the_ui_stays_usable() {
    let setup = setup();
    let server = scripted(json!([{"text": "Small prompts work."}])).await;
    let script = pane_script(&setup, &server, &[]);
    let paste = setup.tmp.path().join("paste.txt");
    let line = format!("{}\n", "y".repeat(99));
    std::fs::write(&paste, line.repeat(10 * 1024 * 1024 / line.len())).expect("paste file");
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.load_buffer(&paste);
        pane.paste();
        pane.wait_for("paste of 10.0 MB refused: the limit is 1 MB", WAIT);
        pane.type_text("a small prompt");
        pane.keys(&["Enter"]);
        pane.wait_for("Small prompts work.", WAIT);
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_bytes_in_a_paste_reach_the_model_as_carets_and_an_unbracketed_burst_stays_one_prompt() {
    let setup = setup();
    let server = scripted(json!([{"text": "First seen."}, {"text": "Second seen."}])).await;
    let script = pane_script(&setup, &server, &[]);
    let controls = setup.tmp.path().join("controls.txt");
    std::fs::write(&controls, "ab\u{3}cd\u{1b}ef").expect("paste file");
    let lines = setup.tmp.path().join("lines.txt");
    std::fs::write(&lines, "line1\n\nline2").expect("paste file");
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.load_buffer(&controls);
        pane.paste();
        pane.wait_for("ab^Ccd^[ef", WAIT);
        pane.keys(&["Enter"]);
        pane.wait_for("First seen.", WAIT);
        pane.load_buffer(&lines);
        pane.paste_unbracketed();
        pane.wait_for("line2", WAIT);
        pane.keys(&["Enter"]);
        pane.wait_for("Second seen.", WAIT);
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        pane.wait_for(SETTINGS_END, WAIT);
    })
    .await
    .expect("scenario");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one prompt each");
    let first = requests[0].body["messages"].to_string();
    assert!(first.contains("ab^Ccd^[ef") && !first.contains('\u{fffd}'), "{first}");
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("line1\\n\\nline2"), "a pasted blank line stays in the prompt: {second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_restores_the_terminal() {
    let setup = setup();
    let server = scripted(json!([])).await;
    let script = pane_script(&setup, &server, &[]);
    let argv = [
        env!("CARGO_BIN_EXE_lathe").to_string(),
        "--provider".into(),
        "anthropic".into(),
        "--base-url".into(),
        server.url(),
    ];
    let mark = setup.mark.clone();
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let pids = marked_processes(&argv, &mark);
        assert_eq!(pids.len(), 1, "one lathe process: {pids:?}");
        let status = Command::new("kill").arg("-TERM").arg(pids[0].to_string()).status().expect("kill");
        assert!(status.success());
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 143"), "{after}");
        let words: Vec<String> = stty_flags(&after).split_whitespace().map(str::to_string).collect();
        assert!(words.iter().any(|w| w == "icanon") && words.iter().any(|w| w == "echo"), "{after}");
    })
    .await
    .expect("scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resizing_to_20_by_5_mid_stream_and_back_leaves_the_answer_in_the_scrollback_once() {
    let setup = setup();
    let lines: Vec<String> =
        (1..=40).map(|i| format!("Line {i:02} of the answer says word{i:02} and more text here.")).collect();
    let answer = lines.join("\n\n");
    let server = scripted(json!([{"text": answer, "text_chunks": 120, "chunk_delay_ms": 100}])).await;
    let script = pane_script(&setup, &server, &[]);
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 60, 20, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("tell me");
        pane.keys(&["Enter"]);
        pane.wait_for("word05", WAIT);
        pane.resize(20, 5);
        pane.wait_until(WAIT, "the pane at 20×5", |_| pane.screen().lines().count() <= 5);
        pane.wait_for("word15", WAIT);
        pane.resize(60, 20);
        pane.wait_for("word40", WAIT);
        // The turn is over when the spinner has gone from the screen.
        pane.wait_until(WAIT, "the end of the turn", |_| {
            let screen = pane.screen();
            !screen.contains("Working") && screen.contains("claude-sonnet-4-5 · default")
        });
        let capture = pane.capture();
        // Rows wrapped at 20 columns are joined again, so each line of the answer reads whole.
        let joined = capture.split_whitespace().collect::<Vec<_>>().join(" ");
        for line in &lines {
            assert_eq!(
                joined.matches(line.as_str()).count(),
                1,
                "`{line}` once in the scrollback:\n{capture}"
            );
        }
        let prompts = capture.lines().filter(|row| row.trim() == "›").count();
        assert_eq!(prompts, 1, "no earlier frame of the viewport stays in the scrollback:\n{capture}");
    })
    .await
    .expect("scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_write_asks_with_its_diff_and_slash_memory_lists_the_entry() {
    let setup = setup();
    let server = scripted(json!([
        {"tool_calls": [{"id": "m1", "name": "memory", "arguments":
            {"command": "create", "path": "/memories/user/pnpm.md", "file_text": "We use pnpm, not npm."}}]},
        {"text": "Saved it."}
    ]))
    .await;
    let script = pane_script(&setup, &server, &[]);
    let dir = setup.tmp.path().to_path_buf();
    let entry = setup.home.join("memory/pnpm.md");
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 110, 32, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("remember that we use pnpm");
        pane.keys(&["Enter"]);
        let shown = pane.wait_for("+ We use pnpm, not npm.", WAIT);
        assert!(shown.contains("/memories/user/pnpm.md"), "the dialog names the entry:\n{shown}");
        assert!(!entry.exists(), "nothing is written before the answer");
        pane.keys(&["y"]);
        pane.wait_for("Saved it.", WAIT);
        assert!(entry.exists());
        pane.type_text("/memory");
        pane.keys(&["Enter"]);
        // "user/pnpm" is already on screen in the call's row: wait for the listing below the answer.
        let below_answer = |screen: &str| screen.rsplit_once("Saved it.").map(|(_, after)| after.to_string());
        let listed = pane.wait_until(WAIT, "the /memory listing", |screen| {
            below_answer(screen).is_some_and(|after| after.contains("user/pnpm"))
        });
        let after = below_answer(&listed).unwrap_or_default();
        assert!(after.contains("We use pnpm, not npm."), "{listed}");
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        pane.wait_for(SETTINGS_END, WAIT);
    })
    .await
    .expect("scenario");
}

/// The argv of the lathe a pane script starts against `server` with `args`.
pub(super) fn lathe_argv(server: &MockServer, args: &[&str]) -> Vec<String> {
    let mut argv: Vec<String> =
        [env!("CARGO_BIN_EXE_lathe"), "--provider", "anthropic", "--base-url"].map(String::from).to_vec();
    argv.push(server.url());
    argv.extend(args.iter().map(|arg| arg.to_string()));
    argv
}

/// Sends SIGKILL to the one lathe process running `argv` with the setup's mark.
pub(super) fn sigkill(argv: &[String], mark: &str) {
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let pids = marked_processes(&argv, mark);
    assert_eq!(pids.len(), 1, "one lathe process: {pids:?}");
    let status = Command::new("kill").arg("-KILL").arg(pids[0].to_string()).status().expect("kill");
    assert!(status.success());
}

/// The session file's items.
pub(super) fn ledger_items(home: &Path) -> Vec<Value> {
    session_files(home)
        .iter()
        .flat_map(|file| {
            std::fs::read_to_string(file).unwrap_or_default().lines().map(str::to_string).collect::<Vec<_>>()
        })
        .filter_map(|line| serde_json::from_str(&line).ok())
        .collect()
}

/// A setup whose user config lets a loop tick every second.
fn loop_setup() -> Setup {
    let setup = setup();
    let config = "[retry]\nmax_retries = 0\n[loop]\nmin_interval_ms = 1000\n";
    std::fs::write(setup.home.join("config.toml"), config).expect("config");
    setup
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_ticks_survives_sigkill_and_fires_again_after_continue_until_esc_stops_it() {
    let setup = loop_setup();
    let answers = |label: &str| -> Value {
        Value::Array((1..=30).map(|n| json!({"text": format!("{label} answer {n}.")})).collect())
    };
    let server = std::sync::Arc::new(scripted(answers("Tick")).await);
    let script = pane_script(&setup, &server, &[]);
    let argv = lathe_argv(&server, &[]);
    let resumed = std::sync::Arc::new(scripted(answers("Resumed")).await);
    let second = pane_script_named(&setup, &resumed, &["--continue"], "continue.sh");
    let (home, mark) = (setup.home.clone(), setup.mark.clone());
    let dir = setup.tmp.path().to_path_buf();
    let second_dir = dir.join("second");
    std::fs::create_dir_all(&second_dir).expect("dir");
    let (first_server, second_server) = (server.clone(), resumed.clone());
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        // Bad input starts nothing.
        pane.type_text("/loop 5x check the build");
        pane.keys(&["Enter"]);
        pane.wait_for("loop not started: `5x` is not an interval", WAIT);
        pane.type_text("/loop 25h check the build");
        pane.keys(&["Enter"]);
        pane.wait_for("loop not started: an interval of 1 d 1 h is over the maximum of 1 d", WAIT);
        assert_eq!(first_server.requests().len(), 0);

        pane.type_text("/loop 2s check the build");
        pane.keys(&["Enter"]);
        pane.wait_for("Tick answer 1.", WAIT);
        pane.wait_for("Tick answer 2.", WAIT);
        for request in first_server.requests() {
            let messages = request.body["messages"].as_array().cloned().unwrap_or_default();
            let last = messages.last().map(Value::to_string).unwrap_or_default();
            assert!(last.contains("check the build"), "each tick sends the prompt as the user turn: {last}");
        }
        let items = ledger_items(&home);
        assert!(items.iter().any(|item| item["meta"] == "loop_start"), "{items:?}");
        assert!(items.iter().any(|item| item["meta"] == "loop_tick" && item["tick"] == 1), "{items:?}");

        sigkill(&argv, &mark);
        pane.wait_for("lathe exited with status 137", WAIT);
        drop(pane);

        // Nothing is typed: the loop the ledger holds fires again.
        let pane = Tmux::start(&second_dir, 100, 30, &second);
        pane.wait_for("Resumed answer 1.", WAIT);
        let sent = second_server.requests()[0].body["messages"].to_string();
        assert!(sent.contains("check the build"), "{sent}");
        pane.type_text("/loop");
        pane.keys(&["Enter"]);
        pane.wait_for("\"check the build\" every 2 s ·", WAIT);
        pane.keys(&["Escape"]);
        pane.wait_for("loop ended after", WAIT);
        let items = ledger_items(&home);
        let end = items.iter().find(|item| item["meta"] == "loop_end").expect("a loop_end item");
        assert_eq!(end["reason"], "stopped by the user");
        let ticks = second_server.requests().len();
        std::thread::sleep(Duration::from_millis(2_500));
        assert_eq!(second_server.requests().len(), ticks, "no tick after the loop ended");
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        pane.wait_for(SETTINGS_END, WAIT);
    })
    .await
    .expect("scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_due_tick_waits_while_a_permission_dialog_is_open_and_never_answers_it() {
    let setup = loop_setup();
    let server = std::sync::Arc::new(
        scripted(json!([
            {"tool_calls": [{"id": "call_1", "name": "shell", "arguments": {"command": "echo hi > out.txt"}}]},
            {"text": "Wrote out.txt."},
            {"text": "Second tick."}
        ]))
        .await,
    );
    let script = pane_script(&setup, &server, &[]);
    let workspace = setup.workspace.clone();
    let dir = setup.tmp.path().to_path_buf();
    let seen = server.clone();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("/loop 1s write the file");
        pane.keys(&["Enter"]);
        pane.wait_for("Run this command?", WAIT);
        // Ticks fall due while the dialog is open: none is sent, and none answers it.
        std::thread::sleep(Duration::from_millis(3_000));
        assert_eq!(seen.requests().len(), 1);
        assert!(pane.screen().contains("Run this command?"), "{}", pane.screen());
        assert!(!workspace.join("out.txt").exists());
        pane.keys(&["y"]);
        pane.wait_for("Wrote out.txt.", WAIT);
        pane.wait_for("Second tick.", WAIT);
        assert!(workspace.join("out.txt").exists());
        pane.type_text("/loop stop");
        pane.keys(&["Enter"]);
        pane.wait_for("loop ended after 2 ticks: stopped by the user", WAIT);
    })
    .await
    .expect("scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_paced_loop_ticks_when_the_model_asks_and_ends_when_it_does_not() {
    let setup = loop_setup();
    let server = std::sync::Arc::new(
        scripted(json!([
            {"tool_calls": [{"id": "call_w", "name": "schedule_wakeup",
                "arguments": {"delay_seconds": 1, "reason": "the build is short"}}]},
            {"text": "Still building."},
            {"text": "All green."}
        ]))
        .await,
    );
    let script = pane_script(&setup, &server, &[]);
    let home = setup.home.clone();
    let dir = setup.tmp.path().to_path_buf();
    let seen = server.clone();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 100, 30, &script);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("/loop watch the build");
        pane.keys(&["Enter"]);
        pane.wait_for("Still building.", WAIT);
        pane.wait_for("All green.", WAIT);
        pane.wait_for("loop ended after 2 ticks: done: the tick scheduled no wakeup", WAIT);
        let requests = seen.requests();
        assert_eq!(requests.len(), 3);
        let tools = requests[0].body["tools"].to_string();
        assert!(tools.contains("\"schedule_wakeup\""), "a self-paced tick offers the tool: {tools}");
        let items = ledger_items(&home);
        let tick = items.iter().find(|item| item["meta"] == "loop_tick").expect("a loop_tick item");
        assert_eq!(tick["reason"], "the build is short");
        let gap = requests[2].received_ms - requests[1].received_ms;
        assert!(gap >= 900.0, "the next tick waited for the delay asked for (clamped to 1 s here): {gap} ms");
    })
    .await
    .expect("scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goal_budget_raises_the_budget_through_a_sigkill_and_goal_clear_ends_the_goal() {
    let setup = setup();
    let verdict = r#"{"met": false, "reason": "the tests still fail", "impossible": false}"#;
    let script_json = json!({
        "turns": [
            {"text": "First try."},
            {"text": "Second try.", "first_byte_delay_ms": 3_000},
            {"text": "Third try.", "first_byte_delay_ms": 60_000}
        ],
        "side_replies": [{"when_last_user_contains": "[goal evaluation]", "text": verdict}]
    });
    let script = Script::from_json(&script_json.to_string()).expect("script");
    let server = MockServer::start(Mode::Scripted(script)).await.expect("mock");
    let pane_sh = pane_script(&setup, &server, &[]);
    let argv = lathe_argv(&server, &[]);
    let continued = scripted(json!([])).await;
    let second = pane_script_named(&setup, &continued, &["--continue"], "continue.sh");
    let (home, mark) = (setup.home.clone(), setup.mark.clone());
    let dir = setup.tmp.path().to_path_buf();
    let second_dir = dir.join("second");
    std::fs::create_dir_all(&second_dir).expect("dir");
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 120, 30, &pane_sh);
        pane.wait_for("claude-sonnet-4-5 · default", WAIT);
        pane.type_text("/goal tests pass --check false");
        pane.keys(&["Enter"]);
        pane.wait_for("goal active: iteration 1 of 20", WAIT);
        // Raised while the second iteration runs.
        pane.type_text("/goal budget +5");
        pane.keys(&["Enter"]);
        pane.wait_for("goal active: iteration 2 of 25", WAIT);
        sigkill(&argv, &mark);
        pane.wait_for("lathe exited with status 137", WAIT);
        drop(pane);

        let pane = Tmux::start(&second_dir, 120, 30, &second);
        pane.wait_for("resuming the goal \"tests pass\" at iteration 2 of 25", WAIT);
        pane.type_text("/goal");
        pane.keys(&["Enter"]);
        pane.wait_for("goal: tests pass — active after 2 of 25 iterations", WAIT);
        pane.type_text("/goal clear");
        pane.keys(&["Enter"]);
        pane.wait_for("goal cleared: iteration 2 of 25 — cleared by the user (/goal clear)", WAIT);
        pane.type_text("/goal");
        pane.keys(&["Enter"]);
        pane.wait_for("no goal; /goal CONDITION", WAIT);
        let items = ledger_items(&home);
        assert!(
            items.iter().any(|item| item["meta"] == "goal_budget" && item["max_iterations"] == 25),
            "{items:?}"
        );
        let end = items.iter().rev().find(|item| item["meta"] == "goal_end").expect("a goal_end item");
        assert_eq!(end["status"], "cleared");
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        pane.wait_for(SETTINGS_END, WAIT);
    })
    .await
    .expect("scenario");
}
