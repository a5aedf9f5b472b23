//! `/team` in the terminal UI (tmux pane): the lead's members and their states while they work,
//! and the status line's count of running teammates.

use lathe_mock::{MockServer, Mode, Script};
use serde_json::json;

use super::tmux::Tmux;
use super::tui::{SETTINGS_END, WAIT, pane_script, setup};

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
