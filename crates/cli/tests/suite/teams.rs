//! Agent teams through `lathe --teams -p` against `lathe-mock`: the lead runs on `lead-model`, its
//! teammates are `lathe teammate` processes on `alpha-model` and `beta-model` (their agent types'
//! `model`), so the mock serves each its own turns whatever order their requests arrive in, and
//! the log tells them apart. The team lives under the test's `LATHE_HOME/teams/crew`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use lathe_mock::{LoggedRequest, MockServer, Mode, Script};
use serde_json::{Value, json};

use super::support::{
    Env, env, lathe, offered_tools, output, process_gone, session_files, stderr, tool_result_text,
};

async fn mock(lead: Value, alpha: Value, beta: Value) -> MockServer {
    let script = json!({"turns": lead, "model_turns": {"alpha-model": alpha, "beta-model": beta}});
    let script = Script::from_json(&script.to_string()).expect("script");
    MockServer::start(Mode::Scripted(script)).await.expect("mock")
}

fn setup() -> Env {
    let env = env();
    let agents = env.workspace.join(".lathe/agents");
    std::fs::create_dir_all(&agents).expect("agents");
    for (name, role) in [("alpha", "ALPHA-ROLE"), ("beta", "BETA-ROLE")] {
        let text =
            format!("---\nname: {name}\ndescription: {name} worker\nmodel: {name}-model\n---\n{role}\n");
        std::fs::write(agents.join(format!("{name}.md")), text).expect("agent");
    }
    env
}

/// One response with these calls (`[name, arguments]`), ids `<prefix>_<n>`.
fn calls(prefix: &str, list: &[(&str, Value)]) -> Value {
    let calls: Vec<Value> = list
        .iter()
        .enumerate()
        .map(|(n, (name, arguments))| json!({"id": format!("{prefix}_{n}"), "name": name, "arguments": arguments}))
        .collect();
    json!({"tool_calls": calls})
}

/// Kills the process `pid` when the test ends (fails) before it did, so that a failed test
/// leaves no lathe running and its runtime does not wait on it.
struct KillOnDrop(Option<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

fn text(text: &str) -> Value {
    json!({"text": text})
}

fn spawn(name: &str, prompt: &str, isolation: Option<&str>) -> (&'static str, Value) {
    let mut arguments = json!({"team": "crew", "name": name, "prompt": prompt, "agent_type": name});
    if let Some(isolation) = isolation {
        arguments["isolation"] = json!(isolation);
    }
    ("spawn_teammate", arguments)
}

/// A shell call that waits until the test creates `go` in the workspace.
fn wait_for_go() -> (&'static str, Value) {
    ("shell", json!({"command": "until [ -e go ]; do sleep 0.05; done"}))
}

fn send(to: &str, text: &str) -> (&'static str, Value) {
    ("send_message", json!({"to": to, "text": text}))
}

fn by_model<'a>(requests: &'a [LoggedRequest], model: &str) -> Vec<&'a LoggedRequest> {
    requests.iter().filter(|request| request.body["model"] == model).collect()
}

/// The `<team-mail>` blocks of a request's user-side text.
fn mail(request: &LoggedRequest) -> Vec<String> {
    let mut out = Vec::new();
    for message in request.body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if let Some(text) = block["text"].as_str().filter(|text| text.starts_with("<team-mail>")) {
                out.push(text.to_string());
            }
        }
    }
    out
}

fn team_dir(env: &Env) -> PathBuf {
    env.home.join("teams/crew")
}

fn roster(env: &Env) -> Value {
    serde_json::from_str(&std::fs::read_to_string(team_dir(env).join("team.json")).expect("roster"))
        .expect("json")
}

fn pid_of(env: &Env, name: &str) -> String {
    roster(env)["members"][name]["pid"].as_u64().expect("pid").to_string()
}

/// Every line of a mailbox file, parsed (each must be a whole message).
fn mailbox(env: &Env, member: &str) -> Vec<Value> {
    let text =
        std::fs::read_to_string(team_dir(env).join(format!("inbox/{member}.jsonl"))).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("torn line ({e}): {line}")))
        .collect()
}

/// Waits (checking every 20 ms, at most 60 s) until `ready` holds.
async fn until(what: &str, mut ready: impl FnMut() -> bool) {
    for _ in 0..3000 {
        if ready() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn a_lead_and_two_teammates_share_the_board_and_mail_and_shutdown_ends_both() {
    let env = setup();
    let server = mock(
        json!([
            calls("mk", &[("team_create", json!({"name": "crew"}))]),
            calls("b1", &[("board_add", json!({"title": "parser"}))]),
            calls("b2", &[("board_add", json!({"title": "docs"}))]),
            calls("b3", &[("board_add", json!({"title": "tests", "blocked_by": [1]}))]),
            calls(
                "sp",
                &[spawn("alpha", "ALPHA-TASK take #1", None), spawn("beta", "BETA-TASK take #2", None)]
            ),
            text("LEAD waits for the team"),
            calls("m1", &[send("alpha", "finish #1")]),
            text("LEAD waits for alpha"),
            calls("m2", &[send("beta", "take #3 now")]),
            text("LEAD waits for beta"),
            calls("sd", &[send("*", "shutdown")]),
            text("LEAD waits for the shutdown"),
            text("TEAM DONE")
        ]),
        json!([
            calls("a0", &[wait_for_go()]),
            calls(
                "a1",
                &[("board_update", json!({"id": 1, "status": "in_progress"})), send("lead", "ALPHA took #1")]
            ),
            text("alpha is idle"),
            calls(
                "a2",
                &[("board_update", json!({"id": 1, "status": "done"})), send("lead", "ALPHA finished #1")]
            ),
            text("alpha is done")
        ]),
        json!([
            calls("c0", &[wait_for_go()]),
            calls(
                "c1",
                &[
                    ("board_update", json!({"id": 2, "status": "in_progress"})),
                    ("board_update", json!({"id": 3, "status": "in_progress"})),
                    ("spawn_teammate", json!({"team": "crew", "name": "gamma", "prompt": "x"})),
                ]
            ),
            calls("c2", &[send("lead", "BETA took #2; #3 is blocked")]),
            text("beta is idle"),
            calls(
                "c3",
                &[("board_update", json!({"id": 3, "status": "in_progress"})), send("lead", "BETA took #3")]
            ),
            text("beta works on #3")
        ]),
    )
    .await;
    let mut command = lathe(&env, &server.url(), &["--teams", "--model", "lead-model", "--yolo", "-p", "go"]);
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("lead");
    let mut guard = KillOnDrop(Some(child.id()));
    let lead = tokio::task::spawn_blocking(move || child.wait_with_output());
    // The teammates start their work once the lead has sent its request after spawning them.
    until("the lead's request after the spawn", || by_model(&server.requests(), "lead-model").len() >= 6)
        .await;
    std::fs::write(env.workspace.join("go"), "").expect("go");
    let out = lead.await.expect("join").expect("lead");
    guard.0 = None;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "TEAM DONE");
    let requests = server.requests();
    let (lead, alpha, beta) = (
        by_model(&requests, "lead-model"),
        by_model(&requests, "alpha-model"),
        by_model(&requests, "beta-model"),
    );
    assert_eq!((lead.len(), alpha.len(), beta.len()), (13, 5, 6));

    // Each teammate got its brief, its role and its task, and the reduced tool set.
    let first = alpha[0].body.to_string();
    assert!(first.contains("You are `alpha`, a teammate in the team `crew`"), "{first}");
    assert!(first.contains("ALPHA-ROLE") && first.contains("ALPHA-TASK take #1"), "{first}");
    let tools = offered_tools(&alpha[0].body);
    for name in ["send_message", "board_add", "board_update", "board_list", "board_get"] {
        assert!(tools.contains(&name.to_string()), "{name} missing: {tools:?}");
    }
    for name in ["team_create", "spawn_teammate", "task", "task_output", "task_kill"] {
        assert!(!tools.contains(&name.to_string()), "{name} offered to a teammate: {tools:?}");
    }
    assert!(offered_tools(&lead[0].body).contains(&"spawn_teammate".to_string()));

    // Beta could not take the blocked item, and has no spawn_teammate.
    let refused = tool_result_text(&beta[2].body);
    assert!(refused.contains("#3 cannot be taken: it is blocked by #1"), "{refused}");
    assert!(refused.contains("unknown tool `spawn_teammate`"), "{refused}");

    // No mail before the teammates finished their turns; then the lead's next request holds both
    // messages and both idle notices, in one block.
    for request in &lead[..6] {
        assert!(mail(request).is_empty(), "mail too early: {:?}", mail(request));
    }
    let delivered = mail(lead[6]).join("\n");
    assert!(
        delivered.contains("ALPHA took #1") && delivered.contains("BETA took #2; #3 is blocked"),
        "{delivered}"
    );
    assert_eq!(delivered.matches("kind=\"idle\"").count(), 2, "{delivered}");
    assert_eq!(mail(lead[6]).len(), 1);
    let later = mail(lead[8]).join("\n");
    assert!(later.contains("ALPHA finished #1"), "{later}");
    assert!(!mail(lead[6]).join("\n").contains("ALPHA finished #1"), "reported before it was asked");
    // The blocked item was taken only after its blocker was done.
    let taken = tool_result_text(&beta[5].body);
    assert!(
        taken.contains("updated #3") && taken.contains("(in_progress, owner beta) blocked by #1"),
        "{taken}"
    );
    assert!(mail(lead[10]).join("\n").contains("BETA took #3"));
    assert!(!mail(lead[8]).join("\n").contains("BETA took #3"));
    let ended = mail(lead[12]).join("\n");
    assert_eq!(ended.matches("kind=\"exited\"").count(), 2, "{ended}");

    // The board on disk, blocked_by kept both ways.
    let board: Value =
        serde_json::from_str(&std::fs::read_to_string(team_dir(&env).join("board.json")).expect("board"))
            .expect("json");
    let items = board["items"].as_array().expect("items");
    assert_eq!(items[0]["status"], "done");
    assert_eq!(items[0]["blocks"], json!([3]));
    assert_eq!(
        (&items[2]["status"], &items[2]["owner"], &items[2]["blocked_by"]),
        (&json!("in_progress"), &json!("beta"), &json!([1]))
    );

    // Shutdown ended both processes; each member kept a session file of its own.
    for name in ["alpha", "beta"] {
        let pid = pid_of(&env, name);
        assert!(process_gone(&pid), "{name} ({pid}) survived");
    }
    assert_eq!(session_files(&env.home).len(), 3, "{:?}", session_files(&env.home));
    // Every mailbox line is a whole message; the teammates' cursors are at their ends.
    assert_eq!(mailbox(&env, "alpha").len(), 3);
    let cursor: Value = serde_json::from_str(
        &std::fs::read_to_string(team_dir(&env).join("inbox/alpha.cursor")).expect("cursor"),
    )
    .expect("json");
    let size = std::fs::metadata(team_dir(&env).join("inbox/alpha.jsonl")).expect("size").len();
    assert_eq!(cursor["offset"], size);
}

#[tokio::test]
async fn a_killed_teammate_is_reported_dead_and_a_restart_reads_on_from_its_cursor() {
    let env = setup();
    let server = mock(
        json!([
            calls("mk", &[("team_create", json!({"name": "crew"}))]),
            calls("sp", &[spawn("alpha", "ALPHA-TASK", None)]),
            text("LEAD waits"),
            calls("m1", &[send("alpha", "SECOND-JOB")]),
            text("LEAD waits again"),
            text("LEAD NOTED")
        ]),
        json!([
            calls("a1", &[send("lead", "ALPHA did the task")]),
            text("alpha is idle"),
            {"text": "never arrives", "first_byte_delay_ms": 600_000}
        ]),
        json!([]),
    )
    .await;
    let mut command = lathe(&env, &server.url(), &["--teams", "--model", "lead-model", "--yolo", "-p", "go"]);
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("lead");
    let mut guard = KillOnDrop(Some(child.id()));
    let lead = tokio::task::spawn_blocking(move || child.wait_with_output());
    // Alpha's second turn is in flight: it is killed mid-turn.
    until("alpha's second turn", || by_model(&server.requests(), "alpha-model").len() == 3).await;
    let pid = pid_of(&env, "alpha");
    let killed = std::process::Command::new("kill").args(["-KILL", &pid]).status().expect("kill");
    assert!(killed.success());
    let out = lead.await.expect("join").expect("lead");
    guard.0 = None;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "LEAD NOTED");
    let requests = server.requests();
    let lead = by_model(&requests, "lead-model");
    assert_eq!(lead.len(), 6);
    let told = mail(lead[5]).join("\n");
    assert!(told.contains("The teammate `alpha` died") && told.contains("signal: 9"), "{told}");
    assert!(process_gone(&pid));

    // Nothing written was lost: every line is whole, the killed turn's mail is still unread.
    let inbox = mailbox(&env, "alpha");
    assert_eq!(inbox.len(), 2);
    assert_eq!(inbox[1]["text"], "SECOND-JOB");
    let lead_mail = mailbox(&env, "lead");
    assert!(lead_mail.iter().any(|m| m["text"] == "ALPHA did the task"));
    assert_eq!(lead_mail.last().expect("last")["kind"], "died");

    // Restarted by hand, alpha reads on from its cursor: the second job, not its first task.
    let again = mock(json!([]), json!([text("ALPHA RESTARTED")]), json!([])).await;
    let mut command = lathe(&env, &again.url(), &[]);
    command.args(["--model", "alpha-model", "--yolo", "teammate", "--team", "crew", "--name", "alpha"]);
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("teammate");
    let mut guard = KillOnDrop(Some(child.id()));
    let teammate = tokio::task::spawn_blocking(move || child.wait_with_output());
    until("the restarted alpha's idle notice", || {
        mailbox(&env, "lead").iter().any(|m| m["kind"] == "idle" && m["text"] == "ALPHA RESTARTED")
    })
    .await;
    let shutdown = lathe_core::team::mailbox::Message::new(
        "lead",
        lathe_core::team::mailbox::Kind::Shutdown,
        "shutdown",
    );
    lathe_core::team::mailbox::post(&team_dir(&env).join("inbox"), "alpha", &shutdown).expect("post");
    let out = teammate.await.expect("join").expect("teammate");
    guard.0 = None;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let restarted = again.requests();
    assert_eq!(restarted.len(), 1);
    let body = restarted[0].body.to_string();
    assert!(body.contains("SECOND-JOB") && !body.contains("ALPHA-TASK"), "{body}");
}

#[tokio::test]
async fn a_headless_teammate_s_denied_command_names_its_rule_and_the_lead_is_told() {
    let env = setup();
    std::fs::create_dir_all(env.workspace.join("build")).expect("build");
    std::fs::write(env.workspace.join("build/out.o"), "obj").expect("file");
    let server = mock(
        json!([
            calls("mk", &[("team_create", json!({"name": "crew"}))]),
            calls("sp", &[spawn("alpha", "clean the build", None)]),
            text("LEAD waits"),
            calls("sd", &[send("alpha", "shutdown")]),
            text("LEAD waits for the shutdown"),
            text("LEAD DONE")
        ]),
        json!([calls("a1", &[("shell", json!({"command": "rm -rf build"}))]), text("alpha could not clean")]),
        json!([]),
    )
    .await;
    let out = output(lathe(&env, &server.url(), &["--teams", "--model", "lead-model", "-p", "go"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.workspace.join("build/out.o").exists(), "the denied command ran");
    let requests = server.requests();
    let alpha = by_model(&requests, "alpha-model");
    let denied = tool_result_text(&alpha[1].body);
    assert!(denied.contains("permission denied") && denied.contains("To allow it"), "{denied}");
    let lead = by_model(&requests, "lead-model");
    let told = mail(lead[3]).join("\n");
    assert!(told.contains("kind=\"permission\"") && told.contains("`shell` call was denied"), "{told}");
    assert!(told.contains("To allow it"), "{told}");
    assert!(process_gone(&pid_of(&env, "alpha")));
}

#[tokio::test]
async fn a_second_teammate_editing_the_same_file_is_refused_naming_the_first() {
    let env = setup();
    let server = mock(
        json!([
            calls("mk", &[("team_create", json!({"name": "crew"}))]),
            calls("sp1", &[spawn("alpha", "write app.py", None)]),
            text("LEAD waits for alpha"),
            calls("sp2", &[spawn("beta", "write app.py too", None)]),
            text("LEAD waits for beta"),
            calls("sd", &[send("*", "shutdown")]),
            text("LEAD waits for the shutdown"),
            text("LEAD DONE")
        ]),
        json!([
            calls("a1", &[("write_file", json!({"path": "app.py", "content": "print('alpha')\n"}))]),
            text("alpha wrote")
        ]),
        json!([
            calls("b1", &[("write_file", json!({"path": "app.py", "content": "print('beta')\n"}))]),
            text("beta refused")
        ]),
    )
    .await;
    let args = ["--teams", "--model", "lead-model", "--permission-mode", "accept-edits", "-p", "go"];
    let out = output(lathe(&env, &server.url(), &args)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(env.workspace.join("app.py")).expect("app.py"), "print('alpha')\n");
    let requests = server.requests();
    let refused = tool_result_text(&by_model(&requests, "beta-model")[1].body);
    assert!(refused.contains("app.py is being edited by the teammate `alpha`"), "{refused}");
    for name in ["alpha", "beta"] {
        assert!(process_gone(&pid_of(&env, name)), "{name} survived");
    }
}

#[tokio::test]
async fn teammates_in_worktrees_edit_the_same_file_each_in_its_own() {
    let env = setup();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(&env.workspace)
            .args(args)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    };
    std::fs::write(env.workspace.join("README"), "repo\n").expect("readme");
    git(&["init", "-q"]);
    git(&["add", "README"]);
    git(&["commit", "-qm", "start"]);
    let server = mock(
        json!([
            calls("mk", &[("team_create", json!({"name": "crew"}))]),
            calls(
                "sp",
                &[
                    spawn("alpha", "write app.py", Some("worktree")),
                    spawn("beta", "write app.py", Some("worktree"))
                ]
            ),
            text("LEAD waits"),
            calls("sd", &[send("*", "shutdown")]),
            text("LEAD waits for the shutdown"),
            text("LEAD DONE")
        ]),
        json!([
            calls("a1", &[("write_file", json!({"path": "app.py", "content": "print('alpha')\n"}))]),
            text("alpha wrote")
        ]),
        json!([
            calls("b1", &[("write_file", json!({"path": "app.py", "content": "print('beta')\n"}))]),
            text("beta wrote")
        ]),
    )
    .await;
    let args = ["--teams", "--model", "lead-model", "--permission-mode", "accept-edits", "-p", "go"];
    let out = output(lathe(&env, &server.url(), &args)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let trees = team_dir(&env).join("worktrees");
    assert_eq!(std::fs::read_to_string(trees.join("alpha/app.py")).expect("alpha"), "print('alpha')\n");
    assert_eq!(std::fs::read_to_string(trees.join("beta/app.py")).expect("beta"), "print('beta')\n");
    assert!(!env.workspace.join("app.py").exists(), "the lead's workspace is untouched");
    assert_eq!(roster(&env)["members"]["beta"]["worktree"], true);
    for name in ["alpha", "beta"] {
        assert!(process_gone(&pid_of(&env, name)), "{name} survived");
    }
}

#[tokio::test]
async fn teammates_end_when_the_lead_is_killed() {
    let env = setup();
    let server = mock(
        json!([
            calls("mk", &[("team_create", json!({"name": "crew"}))]),
            calls("sp", &[spawn("alpha", "ALPHA-TASK", None)]),
            text("LEAD waits")
        ]),
        json!([{"text": "never arrives", "first_byte_delay_ms": 600_000}]),
        json!([]),
    )
    .await;
    let mut command = lathe(&env, &server.url(), &["--teams", "--model", "lead-model", "--yolo", "-p", "go"]);
    let mut lead = command.spawn().expect("lead");
    until("alpha's request", || by_model(&server.requests(), "alpha-model").len() == 1).await;
    let pid = pid_of(&env, "alpha");
    lead.kill().expect("kill the lead");
    let _ = tokio::task::spawn_blocking(move || lead.wait()).await.expect("join");
    // Its stdin (a pipe from the lead) closed: the teammate cancels its turn and ends.
    until("the teammate's end", || process_gone(&pid)).await;
    let ledger = session_files(&env.home)
        .into_iter()
        .map(|path| std::fs::read_to_string(path).expect("session"))
        .find(|text| text.contains("alpha-model"))
        .expect("alpha's session file");
    assert!(ledger.contains("ALPHA-TASK"), "{ledger}");
}

#[tokio::test]
async fn two_spawns_of_one_name_in_one_response_start_one_teammate() {
    let env = setup();
    let server = mock(
        json!([
            calls("mk", &[("team_create", json!({"name": "crew"}))]),
            calls("sp", &[spawn("alpha", "first task", None), spawn("alpha", "second task", None)]),
            text("LEAD waits"),
            calls("sd", &[send("alpha", "shutdown")]),
            text("LEAD waits for the shutdown"),
            text("LEAD DONE")
        ]),
        json!([text("alpha did the first task")]),
        json!([]),
    )
    .await;
    let out = output(lathe(&env, &server.url(), &["--teams", "--model", "lead-model", "-p", "go"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let lead = by_model(&requests, "lead-model");
    let results = tool_result_text(&lead[2].body);
    assert_eq!(results.matches("Started the teammate `alpha`").count(), 1, "{results}");
    assert!(results.contains("`alpha` is already running"), "{results}");
    assert_eq!(by_model(&requests, "alpha-model").len(), 1, "one alpha process asked the model");
    let told = mail(lead[3]).join("\n");
    assert!(!told.contains("died"), "{told}");
    assert!(process_gone(&pid_of(&env, "alpha")));
}

#[tokio::test]
async fn a_link_to_a_file_another_teammate_edits_is_that_file() {
    let env = setup();
    std::os::unix::fs::symlink("app.py", env.workspace.join("link.py")).expect("link");
    let server = mock(
        json!([
            calls("mk", &[("team_create", json!({"name": "crew"}))]),
            calls("sp1", &[spawn("alpha", "write app.py", None)]),
            text("LEAD waits for alpha"),
            calls("sp2", &[spawn("beta", "write link.py", None)]),
            text("LEAD waits for beta"),
            calls("sd", &[send("*", "shutdown")]),
            text("LEAD waits for the shutdown"),
            text("LEAD DONE")
        ]),
        json!([
            calls("a1", &[("write_file", json!({"path": "app.py", "content": "print('alpha')\n"}))]),
            text("alpha wrote")
        ]),
        json!([
            calls("b1", &[("read_file", json!({"path": "link.py"}))]),
            calls("b2", &[("write_file", json!({"path": "link.py", "content": "print('beta')\n"}))]),
            text("beta refused")
        ]),
    )
    .await;
    let args = ["--teams", "--model", "lead-model", "--permission-mode", "accept-edits", "-p", "go"];
    let out = output(lathe(&env, &server.url(), &args)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(env.workspace.join("app.py")).expect("app.py"), "print('alpha')\n");
    let requests = server.requests();
    let refused = tool_result_text(&by_model(&requests, "beta-model")[2].body);
    assert!(refused.contains("app.py is being edited by the teammate `alpha`"), "{refused}");
}
