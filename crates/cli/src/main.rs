//! The `lathe` binary: argument parsing, the headless front end (print mode) and the interactive
//! terminal UI ([`tui`]).
//!
//! Flow: parse flags → start a session with `lathe_core::host::SessionBuilder` (config layers,
//! provider, session, system prompt, tools) → send the prompt as an op while the printer consumes
//! the session's events → exit with a status that tells success, usage error, provider error,
//! limit, or cancel apart (see `lathe --help`).

mod acp;
mod args;
mod auto_mode;
mod batch;
mod failure;
mod mcp;
mod memory;
mod model;
mod print;
mod report;
mod serve;
mod sessions;
mod status;
mod stdin;
mod teammate;
mod tui;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use lathe_core::host::{SessionBuilder, SessionChoice, SessionHandle, StartError};
use lathe_protocol::{AgentEvent, AgentOp, Content, StopCause};
use tokio::sync::mpsc;

use crate::args::{Cli, Command, EXIT_API, EXIT_CANCELLED, EXIT_FAILED, EXIT_LIMIT, EXIT_OK, EXIT_USAGE};
use crate::print::Printer;

fn main() -> ExitCode {
    let cli = match failure::parse_cli() {
        Ok(cli) => cli,
        Err(code) => return ExitCode::from(code),
    };
    init_tracing();
    // Whatever detaches from a command's group (`setsid`, a double fork) is re-parented to Lathe,
    // so that at exit nothing Lathe started survives.
    let adopted = lathe_core::host::orphans::adopt();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            let message = format!("cannot start the async runtime: {error}");
            return ExitCode::from(failure::report(
                cli.output_format,
                failure::INTERNAL,
                &message,
                EXIT_FAILED,
            ));
        }
    };
    let code = runtime.block_on(run(cli));
    // A tool thread blocked in a system call (a FIFO nobody writes to) must not keep the process
    // alive after the run has ended and its result is printed.
    runtime.shutdown_timeout(Duration::from_millis(200));
    end_adopted(adopted);
    ExitCode::from(code)
}

/// Ends what Lathe's commands, hooks and servers left running anywhere below it (see
/// [`lathe_core::host::orphans`]), and says so in the log.
fn end_adopted(adopted: bool) {
    if adopted {
        let ended = lathe_core::host::orphans::end_adopted(Duration::from_millis(200));
        if !ended.is_empty() {
            tracing::info!(?ended, "ended processes left running at exit");
        }
    }
}

/// Cancels the run on SIGINT (Ctrl+C), SIGTERM or SIGHUP — the session then kills running
/// commands and records interrupted results — and exits at once on a second signal. Returns the
/// exit status a signal asks for (130, 143 or 129), 0 until one arrives.
fn watch_signals(ops: mpsc::UnboundedSender<AgentOp>) -> Arc<AtomicU8> {
    let status = Arc::new(AtomicU8::new(0));
    let seen = status.clone();
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup()))
        else {
            return;
        };
        loop {
            let code = tokio::select! {
                result = tokio::signal::ctrl_c() => if result.is_ok() { EXIT_CANCELLED } else { return },
                _ = term.recv() => 143,
                _ = hup.recv() => 129,
            };
            if seen.swap(code, Ordering::SeqCst) != 0 {
                end_adopted(true);
                std::process::exit(i32::from(code));
            }
            let _ = ops.send(AgentOp::Cancel);
        }
    });
    status
}

/// Diagnostics go to a log file only when `LATHE_LOG` names one (never to the user's terminal).
fn init_tracing() {
    let Some(path) = std::env::var_os("LATHE_LOG") else { return };
    let Ok(file) = std::fs::OpenOptions::new().create(true).append(true).open(path) else { return };
    let filter = tracing_subscriber::EnvFilter::try_from_env("LATHE_LOG_LEVEL")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(false).with_writer(file).try_init();
}

async fn run(cli: Cli) -> u8 {
    // A file-size limit (`ulimit -f`) must make a write fail (EFBIG), which the session reports,
    // rather than kill the process with SIGXFSZ: registering a handler replaces the default action.
    let _ = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::from_raw(libc::SIGXFSZ));
    match &cli.command {
        Some(Command::Model { action }) => return model::model_command(action).await,
        Some(Command::Sessions { json }) => return list_sessions(&cli, *json),
        Some(Command::Mcp { action }) => return mcp::command(&cli, action).await,
        Some(Command::Memory { action }) => return memory::command(&cli, action),
        Some(Command::AutoMode { action }) => return auto_mode::command(&cli, action).await,
        Some(Command::Acp) => return acp::run(cli.flags()).await,
        Some(Command::Serve(args)) => return serve::run(cli.flags(), args).await,
        Some(Command::Batch(args)) => return batch::command(&cli, args).await,
        Some(Command::BatchTask(args)) => return batch::task_command(args).await,
        Some(Command::Teammate { team, name, attached, lead_approves }) => {
            let seat = lathe_core::host::TeamSeat {
                team: team.clone(),
                name: name.clone(),
                lead_approves: *lead_approves,
            };
            return teammate::run(&cli, seat, *attached).await;
        }
        None => {}
    }
    let format = cli.output_format;
    let usage = |message: &str| failure::report(format, failure::USAGE, message, EXIT_USAGE);
    let Some(mut prompt) = cli.prompt.clone() else {
        let not_a_terminal = if !std::io::stdin().is_terminal() {
            Some("stdin")
        } else if !std::io::stdout().is_terminal() {
            Some("stdout")
        } else {
            None
        };
        if let Some(stream) = not_a_terminal {
            return usage(&format!(
                "{stream} is not a terminal, which the interactive UI needs; run a task headless with \
                 `lathe -p \"<prompt>\"` (piped input is appended to the prompt)"
            ));
        }
        return tui::run(cli.flags(), cli.first_prompt.clone()).await;
    };
    if cli.first_prompt.is_some() {
        return usage(
            "give the prompt once: `lathe -p \"<prompt>\"` runs headless, `lathe \"<prompt>\"` in the UI",
        );
    }
    match stdin::read_piped(stdin::STDIN_WAIT) {
        stdin::Piped::Text(piped) if !piped.trim().is_empty() => {
            prompt.push_str("\n\n");
            prompt.push_str(&piped);
        }
        stdin::Piped::NotRead { reason } => eprintln!("lathe: note: {reason}"),
        stdin::Piped::Text(_) | stdin::Piped::Terminal => {}
    }
    if prompt.trim().is_empty() {
        return usage("the prompt is empty");
    }
    let goal = cli.goal();
    if let Some(problem) = goal.as_ref().and_then(|goal| goal.problem()) {
        return usage(&format!("--goal: {problem}"));
    }
    let flags = cli.flags();
    if flags.session == SessionChoice::Resume(String::new()) {
        return usage("--resume needs a session id in print mode; `lathe sessions` lists them");
    }

    tracing::debug!("arguments parsed");
    let session = match SessionBuilder::new(flags).start().await {
        Ok(session) => session,
        Err(error) => {
            return match error {
                StartError::Usage(_) | StartError::Config(_) => usage(&error.to_string()),
                StartError::Session(_) => {
                    failure::report(format, failure::SESSION, &error.to_string(), args::EXIT_FAILED)
                }
            };
        }
    };
    tracing::debug!(session = %session.info.id, "session ready");
    print_mode(cli.output_format, session, prompt, goal).await
}

/// Print mode: one prompt, every event printed as it comes, the result at the end.
async fn print_mode(
    format: args::OutputFormat,
    session: SessionHandle,
    prompt: String,
    goal: Option<lathe_protocol::goal::GoalSpec>,
) -> u8 {
    let SessionHandle { ops, mut events, info, task, .. } = session;
    let mut printer = Printer::new(format, info.id.clone());
    let signalled = watch_signals(ops.clone());
    if let Some(goal) = goal {
        let _ = ops.send(AgentOp::SetGoal { goal });
    }
    let _ = ops.send(AgentOp::UserInput { content: vec![Content::text(prompt)] });
    let mut goal_outcome = None;
    let mut finished = None;
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis(200));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let ticking = printer.has_status_line();
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = ticks.tick(), if ticking => {
                printer.tick();
                continue;
            }
        };
        let Some(event) = event else { break };
        match &event {
            AgentEvent::SessionStarted { model, provider, tools, cwd, sandbox, .. } => {
                printer.init(model, provider, tools, cwd, sandbox)
            }
            AgentEvent::Warning { message } => printer.warning(message),
            AgentEvent::Goal { outcome } => {
                printer.goal(outcome);
                goal_outcome = Some(outcome.clone());
            }
            AgentEvent::Finished { cause, stats, final_text, report } => {
                finished =
                    Some((cause.clone(), *stats, final_text.clone(), report.clone().unwrap_or_default()));
                let _ = ops.send(AgentOp::Quit);
            }
            _ => printer.event(&event),
        }
    }
    let _ = task.await;
    let Some((cause, stats, final_text, report)) = finished else {
        let message = "the session ended without finishing the run";
        return failure::report(format, failure::INTERNAL, message, EXIT_FAILED);
    };
    printer.finish(&cause, &stats, &final_text, &report, goal_outcome.as_ref());
    let code = match goal_outcome.as_ref() {
        Some(goal) if cause.is_success() => goal_exit_code(goal.status),
        _ => exit_code(&cause),
    };
    match (code, signalled.load(Ordering::SeqCst)) {
        (EXIT_CANCELLED, signal) if signal != 0 => signal,
        (code, _) => code,
    }
}

fn list_sessions(cli: &Cli, json: bool) -> u8 {
    match lathe_core::host::list_sessions(&cli.flags(), None) {
        Ok(list) => {
            if json {
                sessions::print_json(&list);
            } else {
                sessions::print_table(&list);
            }
            EXIT_OK
        }
        Err(error) => {
            eprintln!("lathe: error: {error}");
            EXIT_USAGE
        }
    }
}

/// The exit code of a run whose turns ended normally but whose goal may not be met: 0 only for
/// met, 1 for needs_review, 4 for the rest.
fn goal_exit_code(status: lathe_protocol::goal::GoalStatus) -> u8 {
    use lathe_protocol::goal::GoalStatus;
    match status {
        GoalStatus::Met => EXIT_OK,
        GoalStatus::NeedsReview => EXIT_FAILED,
        GoalStatus::Active
        | GoalStatus::Paused
        | GoalStatus::Impossible
        | GoalStatus::Stalled
        | GoalStatus::BudgetLimited
        | GoalStatus::Cleared => EXIT_LIMIT,
    }
}

fn exit_code(cause: &StopCause) -> u8 {
    match cause {
        StopCause::Completed => EXIT_OK,
        StopCause::MaxTurns { .. }
        | StopCause::Budget { .. }
        | StopCause::NoProgress { .. }
        | StopCause::ContextExhausted { .. }
        | StopCause::AutoBlocked { .. } => EXIT_LIMIT,
        StopCause::Cancelled => EXIT_CANCELLED,
        StopCause::Refused | StopCause::Hook { .. } => EXIT_FAILED,
        StopCause::Error { kind, .. } if kind == crate::failure::USAGE => EXIT_USAGE,
        StopCause::Error { .. } => EXIT_API,
    }
}
