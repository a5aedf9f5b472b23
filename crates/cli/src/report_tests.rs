use super::*;
use lathe_protocol::{Claim, FileChanged};
use pretty_assertions::assert_eq;

#[test]
fn an_empty_report_has_no_lines() {
    assert_eq!(lines(&RunReport::default()), Vec::<String>::new());
}

#[test]
fn each_part_is_one_line_and_each_claim_another() {
    let report = RunReport {
        files: vec![
            FileChanged { path: "src/app.py".into(), added: 10, removed: 2 },
            FileChanged { path: "tests/test_app.py".into(), added: 2, removed: 1 },
        ],
        commands: vec![
            CommandRun { command: "ls".into(), exit_code: Some(0), test: false },
            CommandRun { command: "python3 -m pytest -q".into(), exit_code: Some(1), test: true },
            CommandRun { command: "sleep 100".into(), exit_code: None, test: false },
        ],
        checks: vec![CheckRun { command: "make check".into(), exit_code: Some(0) }],
        claims: vec![Claim {
            sentence: "Fixed, all tests pass.".into(),
            reason: "the last test run (`python3 -m pytest -q`) exited 1".into(),
        }],
    };
    assert_eq!(
        lines(&report),
        vec![
            "2 files changed (+12 −3): src/app.py (+10 −2), tests/test_app.py (+2 −1)",
            "3 commands: `ls` → exit 0, `python3 -m pytest -q` → exit 1, `sleep 100` → no exit status",
            "1 check: `make check` → exit 0",
            "claim without evidence: \"Fixed, all tests pass.\" — the last test run (`python3 -m pytest -q`) exited 1",
        ]
    );
}

#[test]
fn long_lists_keep_the_first_files_and_the_last_commands() {
    let report = RunReport {
        files: (0..8).map(|n| FileChanged { path: format!("f{n}.py"), added: 1, removed: 0 }).collect(),
        commands: (0..8)
            .map(|n| CommandRun { command: format!("echo {n}"), exit_code: Some(0), test: false })
            .collect(),
        ..RunReport::default()
    };
    let lines = lines(&report);
    assert!(lines[0].starts_with("8 files changed (+8 −0): f0.py (+1 −0), "), "{}", lines[0]);
    assert!(lines[0].ends_with("f5.py (+1 −0), and 2 more"), "{}", lines[0]);
    assert!(lines[1].starts_with("8 commands: …, `echo 2` → exit 0"), "{}", lines[1]);
    assert!(lines[1].ends_with("`echo 7` → exit 0"), "{}", lines[1]);
}
