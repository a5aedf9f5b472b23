//! Decision time per shell command (FEATURES.md §D; target: median ≤ 50 µs, p99 ≤ 500 µs).
//!
//! Reads the corpus `bench/policy/commands.jsonl` (300 command lines, one JSON string a line:
//! recorded agent commands, the security table's commands and common developer commands), builds
//! a policy with rules in a project's `.claude/settings.json` and `.lathe/settings.json`, and times
//! `Policy::decide` for every command over several rounds on one thread. Prints the first decision
//! (which creates the thread's parser), then the median, p90, p99 and maximum per command in µs.
//!
//! Run: `bench/policy/run.sh` (or `cargo bench -p lathe-policy --bench decide -- [CORPUS] [ROUNDS]`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Instant;

use lathe_policy::settings::{load, settings_files};
use lathe_policy::{Access, PermissionMode, Policy, PolicyConfig, SandboxMode, Verdict};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let corpus = args.first().map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/policy/commands.jsonl")
    });
    let rounds: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(20);
    let commands: Vec<String> = std::fs::read_to_string(&corpus)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", corpus.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON string per line"))
        .collect();

    let dir = tempfile::tempdir().expect("tmp");
    let ws = dir.path().join("project");
    let home = dir.path().join("home");
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    std::fs::create_dir_all(ws.join(".lathe")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        ws.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(cargo test *)", "Bash(npm run test:*)", "Bash(git diff *)", "Bash(make*)"],
            "deny": ["Bash(git push *)", "Bash(rm -rf /*)"], "ask": ["Bash(git commit *)"]}}"#,
    )
    .unwrap();
    std::fs::write(
        ws.join(".lathe/settings.json"),
        r#"{"permissions": {"allow": ["Bash(pytest *)", "Bash(go test *)"]}}"#,
    )
    .unwrap();
    let files = settings_files(Some(&home.join(".claude")), Some(&home), &home.join(".lathe"), &ws);
    let policy = Policy::new(PolicyConfig {
        protected_dirs: Vec::new(),
        mode: PermissionMode::Default,
        workspace: ws.clone(),
        home: Some(home.clone()),
        settings: load(&files, Some(&home)),
        protected: files.into_iter().map(|f| f.path).collect(),
        plan_file: None,
        sandbox: SandboxMode::Off,
        network: Default::default(),
    });
    let access = |command: &str| Access::Execute { command: command.to_string(), cwd: ws.clone() };

    let started = Instant::now();
    let first = policy.decide("shell", &access(&commands[0]));
    let first_us = started.elapsed().as_secs_f64() * 1e6;

    let mut samples = Vec::with_capacity(commands.len() * rounds);
    let mut counts = [0usize; 3];
    for round in 0..rounds {
        for command in &commands {
            let access = access(command);
            let started = Instant::now();
            let decision = policy.decide("shell", &access);
            samples.push(started.elapsed().as_secs_f64() * 1e6);
            if round == 0 {
                counts[match decision.verdict {
                    Verdict::Allow => 0,
                    Verdict::Ask => 1,
                    Verdict::Deny => 2,
                }] += 1;
            }
        }
    }
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    println!("corpus: {} commands × {rounds} rounds = {} decisions", commands.len(), samples.len());
    println!("decisions: {} allow, {} ask, {} deny", counts[0], counts[1], counts[2]);
    println!("first decision (creates the thread's parser): {first_us:.1} µs ({:?})", first.verdict);
    println!(
        "per command: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        at(0.5),
        at(0.9),
        at(0.99),
        samples[samples.len() - 1]
    );
    println!("targets: median ≤ 50 µs, p99 ≤ 500 µs");
}
