//! `lathe batch TASKS.jsonl --out DIR`: many tasks, each a headless run in a fresh checkout, on a
//! local process pool (`--executor local --workers N`) or a Ray cluster (`--executor ray`).
//!
//! Everything is checked before anything runs (the task file line by line, every provider, every
//! repository and base revision, the Ray address): bad input exits 2 with the line and field.
//! Finished ids (a row in `DIR/results.jsonl`) are skipped unless `--redo`. Each task runs as
//! `lathe batch-task` ([`task_run`]); its row is appended as it ends ([`results`]). At the end
//! `DIR/summary.json` and `DIR/preds.json` are written and the summary table printed. A row that
//! cannot be written (a full disk) stops the batch: exit 1, the rows before it intact.

mod local;
mod progress;
mod ray;
mod results;
mod task_run;
mod tasks;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use serde_json::Value;

use crate::args::{Cli, EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use results::Results;
use tasks::{Defaults, Task};

/// `lathe batch …`
#[derive(Debug, clap::Args)]
pub struct BatchArgs {
    /// The task file: one JSON object a line (`id`, `repo`, `base`, `prompt`, and optional
    /// `test`, `provider`, `model`, `base_url`, `max_turns`, `max_cost`, `timeout_s`,
    /// `permission_mode`).
    pub tasks: PathBuf,
    /// Where results go: results.jsonl, summary.json, preds.json, tasks/<id>/.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Where tasks run.
    #[arg(long, value_enum, default_value_t = Executor::Local)]
    pub executor: Executor,
    /// Tasks at a time of the local executor (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Run again the tasks that already have a row in results.jsonl (their rows are replaced).
    #[arg(long)]
    pub redo: bool,
    /// The Ray dashboard of `--executor ray` (`auto`: a cluster started on this machine).
    #[arg(long, default_value = "auto")]
    pub address: String,
    /// CPUs Ray reserves for each task.
    #[arg(long, default_value_t = 1.0)]
    pub cpus_per_task: f64,
}

/// `lathe batch-task …` (internal: what an executor runs for one task).
#[derive(Debug, clap::Args)]
pub struct TaskArgs {
    /// One merged task object.
    #[arg(long, value_name = "JSON")]
    pub task_json: String,
    /// The batch's results folder (the task writes tasks/<id>/ in it).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Which attempt this is (1 first).
    #[arg(long, default_value_t = 1)]
    pub attempt: u32,
    /// The node's name in the row (default: the host name).
    #[arg(long)]
    pub node: Option<String>,
}

/// Where a batch's tasks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Executor {
    /// A process pool on this machine.
    Local,
    /// A Ray cluster (one Ray job).
    Ray,
}

fn refuse(message: &str) -> u8 {
    eprintln!("lathe: {message}");
    EXIT_USAGE
}

/// Writes `text` to stdout; a reader that has gone (`lathe batch … | head -1`) is not the batch's
/// failure, so a write error is dropped.
pub(crate) fn say(text: std::fmt::Arguments) {
    use std::io::Write;
    let _ = std::io::stdout().write_fmt(text);
}

/// `lathe batch`.
pub async fn command(cli: &Cli, args: &BatchArgs) -> u8 {
    let defaults = Defaults {
        provider: cli.provider.clone(),
        model: cli.model.clone(),
        base_url: cli.base_url.clone(),
        max_turns: cli.max_turns,
        max_cost: cli.max_cost,
        permission_mode: cli.permission_mode.clone(),
    };
    // `-C DIR`: the task file, relative repositories and --out are taken from DIR, as `git -C`.
    if let Some(dir) = &cli.dir
        && let Err(error) = std::env::set_current_dir(dir)
    {
        return refuse(&format!("-C {}: {error}", dir.display()));
    }
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(error) => return refuse(&format!("cannot read the current directory: {error}")),
    };
    let tasks = match tasks::load(&args.tasks, &defaults, &cwd) {
        Ok(tasks) => tasks,
        Err(error) => return refuse(&error.to_string()),
    };
    let shown = args.tasks.display().to_string();
    if args.workers == Some(0) {
        return refuse("--workers: at least 1");
    }
    if let Err(message) = check_providers(&tasks, &cwd) {
        return refuse(&format!("{shown}:{message}"));
    }
    if let Err(message) = check_repos(&tasks).await {
        return refuse(&format!("{shown}:{message}"));
    }
    if args.executor == Executor::Ray
        && let Err(error) = ray::check(&args.address).await
    {
        return refuse(&format!("--executor ray --address {}: {error}", args.address));
    }
    let redo: BTreeSet<String> =
        if args.redo { tasks.iter().map(|task| task.id.clone()).collect() } else { BTreeSet::new() };
    let _taken = match results::take(&args.out) {
        Ok(file) => file,
        Err(error) => return refuse(&format!("cannot use --out: {error}")),
    };
    let mut results = match Results::open(&args.out, &redo) {
        Ok(results) => results,
        Err(error) => return refuse(&format!("cannot use --out {}: {error}", args.out.display())),
    };
    let pending: Vec<Task> =
        tasks.iter().filter(|task| !results.finished().contains(&task.id)).cloned().collect();
    say(format_args!(
        "lathe batch: {} tasks, {} finished already, {} to run\n",
        tasks.len(),
        tasks.len() - pending.len(),
        pending.len()
    ));
    let started = Instant::now();
    let mut progress = progress::Progress::new(pending.len());
    let mut failure: Option<results::ResultsError> = None;
    let mut ran = 0;
    let mut take_row = |row: Value, progress: &mut progress::Progress| -> ControlFlow<()> {
        if failure.is_some() {
            return ControlFlow::Break(());
        }
        progress.ended(&row);
        match results.append(row) {
            Ok(()) => {
                ran += 1;
                ControlFlow::Continue(())
            }
            Err(error) => {
                failure = Some(error);
                ControlFlow::Break(())
            }
        }
    };
    let executor_error = match args.executor {
        Executor::Local => {
            let workers =
                args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let progress_cell = std::cell::RefCell::new(&mut progress);
            local::run(
                &pending,
                &args.out,
                workers,
                &mut |_| progress_cell.borrow_mut().started(),
                &mut |row| take_row(row, &mut progress_cell.borrow_mut()),
            )
            .await;
            None
        }
        Executor::Ray => {
            let objects: Vec<Value> =
                pending.iter().filter_map(|task| serde_json::to_value(task).ok()).collect();
            let mut on_row = |row: Value| take_row(row, &mut progress);
            ray::run(&args.address, &objects, &args.out, args.cpus_per_task, &mut on_row).await.err()
        }
    };
    progress.finish();
    let wall = started.elapsed().as_secs_f64();
    if let Some(error) = failure {
        eprintln!(
            "lathe: cannot write a result row ({error}); the batch stopped with {} rows in {}",
            results.rows().len(),
            args.out.join("results.jsonl").display()
        );
        return EXIT_FAILED;
    }
    let summary = results::summary(results.rows(), ran, wall);
    let written = results::write_json(&args.out.join("summary.json"), &summary).and_then(|()| {
        results::write_json(&args.out.join("preds.json"), &results::preds(&args.out, results.rows()))
    });
    say(format_args!("{}", results::table(&summary)));
    if let Err(error) = written {
        eprintln!("lathe: {error}");
        return EXIT_FAILED;
    }
    if let Some(error) = executor_error {
        eprintln!("lathe: the Ray executor failed: {error}");
        return EXIT_FAILED;
    }
    EXIT_OK
}

/// Every distinct provider of the tasks resolves (an unknown name is refused before anything
/// runs). The local model is not loaded for the check.
fn check_providers(tasks: &[Task], cwd: &Path) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    let home = lathe_core::paths::lathe_home();
    for task in tasks {
        if !seen.insert((task.provider.clone(), task.model.clone(), task.base_url.clone())) {
            continue;
        }
        if let Some(url) = &task.base_url
            && let Err(error) = reqwest::Url::parse(url)
        {
            return Err(format!("{}: field `base_url`: `{url}` is not a URL: {error}", task.line));
        }
        if task.provider.as_deref() == Some("local") {
            continue;
        }
        let flags = lathe_core::Flags {
            dir: Some(cwd.to_path_buf()),
            provider: task.provider.clone(),
            model: task.model.clone(),
            base_url: task.base_url.clone(),
            ..lathe_core::Flags::default()
        };
        let config =
            lathe_core::host::Config::resolve(&flags, &home).map_err(|e| format!("{}: {e}", task.line))?;
        if config.provider == "local" {
            continue;
        }
        if let Err(error) = config.build_provider(None, None) {
            return Err(format!("{}: field `provider`: {error}", task.line));
        }
    }
    Ok(())
}

/// Every repository exists and holds the task's base revision (a URL: answers `git ls-remote`).
async fn check_repos(tasks: &[Task]) -> Result<(), String> {
    let mut urls: BTreeMap<&str, usize> = BTreeMap::new();
    for task in tasks {
        if tasks::is_url(&task.repo) {
            urls.entry(&task.repo).or_insert(task.line);
            continue;
        }
        let repo = Path::new(&task.repo);
        if !repo.is_dir() {
            return Err(format!("{}: field `repo`: {} does not exist", task.line, task.repo));
        }
        if task_run::git(Some(repo), &["rev-parse", "--git-dir"]).await.is_err() {
            return Err(format!("{}: field `repo`: {} is not a git repository", task.line, task.repo));
        }
        let revision = format!("{}^{{commit}}", task.base);
        if task_run::git(Some(repo), &["rev-parse", "--verify", "--quiet", &revision]).await.is_err() {
            return Err(format!(
                "{}: field `base`: `{}` is not a revision of the repository {}",
                task.line, task.base, task.repo
            ));
        }
    }
    for (url, line) in urls {
        let listed =
            tokio::time::timeout(Duration::from_secs(60), task_run::git(None, &["ls-remote", url, "HEAD"]))
                .await;
        match listed {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => return Err(format!("{line}: field `repo`: {url} cannot be read: {error}")),
            Err(_) => return Err(format!("{line}: field `repo`: {url} did not answer within 60 s")),
        }
    }
    Ok(())
}

/// `lathe batch-task`: runs one task and prints its row.
pub async fn task_command(args: &TaskArgs) -> u8 {
    let task: Task = match serde_json::from_str(&args.task_json) {
        Ok(task) => task,
        Err(error) => return refuse(&format!("--task-json is not a task object: {error}")),
    };
    let node = args.node.clone().unwrap_or_else(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map_or("localhost".into(), |name| name.trim().to_string())
    });
    match task_run::run(&task, &args.out, args.attempt, &node).await {
        Ok(row) => {
            say(format_args!("{row}\n"));
            EXIT_OK
        }
        Err(error) => {
            eprintln!("lathe: task {}: {error}", task.id);
            EXIT_FAILED
        }
    }
}
