//! `/team` in the terminal UI (tmux pane): the lead's members and their states while they work,
//! and the status line's count of running teammates.

use lathe_mock::{MockServer, Mode, Script};
use serde_json::json;

use super::tmux::Tmux;
use super::tui::{SETTINGS_END, WAIT, pane_script, setup};

/// Agent type files `.lathe/agents/<name>.md` in `workspace`, each on the model `<name>-model`.
fn agent_types(workspace: &std::path::Path, names: &[&str]) {
    let agents = workspace.join(".lathe/agents");
    std::fs::create_dir_all(&agents).expect("agents");
    for name in names {
        let agent =
            format!("---\nname: {name}\ndescription: {name} worker\nmodel: {name}-model\n---\nROLE\n");
        std::fs::write(agents.join(format!("{name}.md")), agent).expect("agent");
    }
}

/// A scripted model server for `script` (the lead's `turns` and the teammates' `model_turns`).
async fn scripted(script: serde_json::Value) -> MockServer {
    MockServer::start(Mode::Scripted(Script::from_json(&script.to_string()).expect("script")))
        .await
        .expect("mock")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_team_lists_the_members_and_their_states_while_they_work() {
    let setup = setup();
    let agents = setup.workspace.join(".lathe/agents");
    std::fs::create_dir_all(&agents).expect("agents");
    let agent = "---\nname: alpha\ndescription: alpha worker\nmodel: alpha-model\n---\nALPHA-ROLE\n";
    std::fs::write(agents.join("alpha.md"), agent).expect("agent");
    let script = json!({
        "turns": [
            {"tool_calls": [{"id": "mk", "name": "team_create", "arguments": {"name": "crew"}}]},
            {"tool_calls": [{"id": "sp", "name": "spawn_teammate",
                             "arguments": {"team": "crew", "name": "alpha", "prompt": "work", "agent_type": "alpha"}}]},
            {"text": "Waiting for alpha."},
            {"text": "ALPHA REPORTED"}
        ],
        "model_turns": {"alpha-model": [
            {"text": "alpha finished", "first_byte_delay_ms": 4000}
        ]}
    });
    let server: MockServer =
        MockServer::start(Mode::Scripted(Script::from_json(&script.to_string()).expect("script")))
            .await
            .expect("mock");
    let pane_script = pane_script(&setup, &server, &["--teams", "--yolo", "--model", "lead-model"]);
    let dir = setup.tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 120, 30, &pane_script);
        pane.wait_for("lead-model", WAIT);
        pane.type_text("start the team");
        pane.keys(&["Enter"]);
        pane.wait_for("1 teammate", WAIT);
        pane.type_text("/team");
        pane.keys(&["Enter"]);
        let shown = pane.wait_until(WAIT, "alpha working", |screen| {
            screen.lines().any(|line| line.contains("alpha") && line.contains("working"))
        });
        assert!(shown.contains("teammates (name, state, last activity, process, workspace)"), "{shown}");
        pane.wait_for("ALPHA REPORTED", WAIT);
        pane.type_text("/team");
        pane.keys(&["Enter"]);
        pane.wait_until(WAIT, "alpha idle", |screen| {
            screen.lines().any(|line| line.contains("alpha") && line.contains("idle"))
        });
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("scenario");
}

/// A teammate of a lead in the terminal UI puts its permission prompt to the lead's user: the
/// lead's dialog names the teammate and its command, and the answer decides whether it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammates_permission_prompt_is_the_lead_users_dialog() {
    let setup = setup();
    agent_types(&setup.workspace, &["alpha", "beta"]);
    for dir in ["build", "keep"] {
        std::fs::create_dir_all(setup.workspace.join(dir)).expect("dir");
        std::fs::write(setup.workspace.join(dir).join("out.o"), "object").expect("file");
    }
    let spawn = |name: &str| {
        json!({"tool_calls": [{"id": format!("sp-{name}"), "name": "spawn_teammate",
               "arguments": {"team": "crew", "name": name, "prompt": "clean up", "agent_type": name}}]})
    };
    let script = json!({
        "turns": [
            {"tool_calls": [{"id": "mk", "name": "team_create", "arguments": {"name": "crew"}}]},
            spawn("alpha"),
            {"text": "Waiting for alpha."},
            spawn("beta"),
            {"text": "Waiting for beta."},
            {"text": "LEAD SAW BOTH"}
        ],
        "model_turns": {
            "alpha-model": [
                {"tool_calls": [{"id": "a1", "name": "shell", "arguments": {"command": "rm -rf build"}}]},
                {"text": "ALPHA CLEANED"}
            ],
            "beta-model": [
                {"tool_calls": [{"id": "b1", "name": "shell", "arguments": {"command": "rm -rf keep"}}]},
                {"text": "BETA WAS REFUSED"}
            ]
        }
    });
    let server = scripted(script).await;
    let pane_script = pane_script(&setup, &server, &["--teams", "--model", "lead-model"]);
    let dir = setup.tmp.path().to_path_buf();
    let workspace = setup.workspace.clone();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 120, 40, &pane_script);
        pane.wait_for("lead-model", WAIT);
        pane.type_text("start the team");
        pane.keys(&["Enter"]);
        let asked = pane.wait_for("the teammate `alpha` asks", WAIT);
        assert!(asked.contains("Run this command?") && asked.contains("rm -rf build"), "{asked}");
        assert!(workspace.join("build/out.o").exists(), "nothing runs before the answer");
        pane.keys(&["y"]);
        pane.wait_for("Waiting for beta.", WAIT);
        let asked = pane.wait_for("the teammate `beta` asks", WAIT);
        assert!(asked.contains("rm -rf keep"), "{asked}");
        pane.keys(&["n"]);
        pane.keys(&["Enter"]);
        pane.wait_for("LEAD SAW BOTH", WAIT);
        assert!(!workspace.join("build").exists(), "alpha's approved command ran");
        assert!(workspace.join("keep/out.o").exists(), "beta's denied command did not run");
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        let after = pane.wait_for(SETTINGS_END, WAIT);
        assert!(after.contains("lathe exited with status 0"), "{after}");
    })
    .await
    .expect("scenario");
    // What each teammate's model was told of its call: run, and denied by the user.
    let requests = server.requests();
    let result_of = |model: &str| {
        let request = requests.iter().rev().find(|request| request.body["model"] == model).expect("request");
        super::support::tool_result_text(&request.body)
    };
    assert!(!result_of("alpha-model").contains("denied"), "{}", result_of("alpha-model"));
    assert!(result_of("beta-model").contains("the user denied this call"), "{}", result_of("beta-model"));
}

/// A teammate's request that comes while the lead is busy with its own request is put to the
/// user before the lead's next request (not handed to its model as mail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_comes_while_the_lead_works_is_asked_before_its_next_request() {
    let setup = setup();
    agent_types(&setup.workspace, &["alpha"]);
    std::fs::create_dir_all(setup.workspace.join("build")).expect("dir");
    let script = json!({
        "turns": [
            {"tool_calls": [{"id": "mk", "name": "team_create", "arguments": {"name": "crew"}}]},
            {"tool_calls": [{"id": "sp", "name": "spawn_teammate",
                             "arguments": {"team": "crew", "name": "alpha", "prompt": "clean", "agent_type": "alpha"}}]},
            {"tool_calls": [{"id": "bl", "name": "board_list", "arguments": {}}], "first_byte_delay_ms": 4000},
            {"text": "Waiting for alpha."},
            {"text": "LEAD DONE"}
        ],
        "model_turns": {"alpha-model": [
            {"tool_calls": [{"id": "a1", "name": "shell", "arguments": {"command": "rm -rf build"}}]},
            {"text": "ALPHA CLEANED"}
        ]}
    });
    let server = scripted(script).await;
    let pane_script = pane_script(&setup, &server, &["--teams", "--model", "lead-model"]);
    let dir = setup.tmp.path().to_path_buf();
    let workspace = setup.workspace.clone();
    tokio::task::spawn_blocking(move || {
        let pane = Tmux::start(&dir, 120, 40, &pane_script);
        pane.wait_for("lead-model", WAIT);
        pane.type_text("start the team");
        pane.keys(&["Enter"]);
        pane.wait_for("the teammate `alpha` asks", WAIT);
        pane.keys(&["y"]);
        pane.wait_for("LEAD DONE", WAIT);
        assert!(!workspace.join("build").exists(), "alpha's approved command ran");
        pane.type_text("/quit");
        pane.keys(&["Enter"]);
        pane.wait_for(SETTINGS_END, WAIT);
    })
    .await
    .expect("scenario");
}
