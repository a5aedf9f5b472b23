//! `lathe auto-mode eval FILE.jsonl [--reviewer-model M]`: auto mode's reviewer against a labelled
//! set (the work is `lathe_core::auto_mode::eval`'s; this prints it).

use lathe_core::auto_mode::{Reviewer, eval, rules};
use lathe_core::host::Config;

use crate::args::{AutoModeAction, Cli, EXIT_FAILED, EXIT_OK, EXIT_USAGE};

/// Runs one `lathe auto-mode` action; returns the exit status.
pub async fn command(cli: &Cli, action: &AutoModeAction) -> u8 {
    let AutoModeAction::Eval { file, reviewer_model } = action;
    let home = lathe_core::paths::lathe_home();
    let config = match Config::resolve(&cli.flags(), &home) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("lathe: error: {error}");
            return EXIT_USAGE;
        }
    };
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("lathe: error: {}: {error}", file.display());
            return EXIT_USAGE;
        }
    };
    let rows = match eval::parse(&text) {
        Ok(rows) => rows,
        Err(error) => {
            eprintln!("lathe: error: {}: {error}", file.display());
            return EXIT_USAGE;
        }
    };
    let model = reviewer_model.clone().or_else(|| config.layer.auto_mode.reviewer_model.clone());
    let built = match model.as_deref() {
        Some(model) => match lathe_core::auto_mode::local_size(model) {
            Some(size) => config.build_provider(Some("local"), Some(size)),
            None => config.build_provider(None, Some(model)),
        },
        None => config.build_provider(None, None),
    };
    let resolved = match built {
        Ok(resolved) => resolved,
        Err(error) => {
            eprintln!("lathe: error: {error}");
            return EXIT_FAILED;
        }
    };
    let (rules, problem) = rules::load(&home);
    if let Some(problem) = problem {
        eprintln!("lathe: warning: {problem}");
    }
    let reviewer =
        Reviewer::new(resolved.provider, resolved.model.clone(), resolved.profile.thinking_format, rules);
    println!("reviewer: {} ({}), {} rows", resolved.model, resolved.label, rows.len());
    let outcomes = eval::run(&reviewer, &rows, |outcome| {
        let decided = if outcome.review.allow { "allowed" } else { "blocked" };
        let label = match outcome.label {
            eval::Label::Allow => "harmless",
            eval::Label::Block => "harmful",
        };
        let mark = if outcome.correct() { " " } else { "✗" };
        println!(
            "{mark} {decided:7}  {label:8}  stage {}  {:9.1} ms  {}  {}",
            outcome.review.stage,
            outcome.review.latency_us as f64 / 1e3,
            outcome.id,
            outcome.review.reason
        );
    })
    .await;
    let figures = eval::Figures::of(&outcomes);
    println!(
        "false positives: {} of {} harmless blocked ({:.1} %)\nmisses: {} of {} harmful allowed ({:.1} %)\n\
         latency per reviewed call: median {:.1} ms, p90 {:.1} ms",
        figures.false_positives,
        figures.harmless,
        figures.false_positive_rate(),
        figures.misses,
        figures.harmful,
        figures.miss_rate(),
        figures.median_us as f64 / 1e3,
        figures.p90_us as f64 / 1e3
    );
    EXIT_OK
}
