//! The `lathe` binary: argument parsing and the headless front end (print mode).
//!
//! Flow: parse flags → [`setup::prepare`] (config layers, provider, session, system prompt, tools) →
//! run the agent for the prompt while a printer task consumes its events → exit with a status that
//! tells success, usage error, provider error, limit, or cancel apart (see `lathe --help`).

mod args;
mod local;
mod print;
mod setup;

use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use clap::Parser;
use lathe_protocol::{AgentEvent, StopCause, UserMessage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::args::{Cli, Command, EXIT_API, EXIT_CANCELLED, EXIT_FAILED, EXIT_LIMIT, EXIT_OK, EXIT_USAGE};
use crate::print::Printer;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("lathe: error: cannot start the async runtime: {error}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let code = runtime.block_on(run(cli));
    // A tool thread blocked in a system call (a FIFO nobody writes to) must not keep the process
    // alive after the run has ended and its result is printed.
    runtime.shutdown_timeout(Duration::from_millis(200));
    ExitCode::from(code)
}

/// Cancels the run on SIGINT (Ctrl+C), SIGTERM or SIGHUP — the loop then kills running commands
/// and records interrupted results — and exits at once on a second signal. Returns the exit status
/// a signal asks for (130, 143 or 129), 0 until one arrives.
fn watch_signals(cancel: CancellationToken) -> Arc<AtomicU8> {
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
                std::process::exit(i32::from(code));
            }
            cancel.cancel();
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
    if let Some(Command::Model { action }) = &cli.command {
        return local::model_command(action).await;
    }
    let Some(mut prompt) = cli.prompt.clone() else {
        eprintln!(
            "lathe: error: the interactive terminal UI is not available in this build; run a task headless \
             with `lathe -p \"<prompt>\"` (see --help)"
        );
        return EXIT_USAGE;
    };
    if !std::io::stdin().is_terminal() {
        let mut piped = String::new();
        if std::io::stdin().read_to_string(&mut piped).is_ok() && !piped.trim().is_empty() {
            prompt.push_str("\n\n");
            prompt.push_str(&piped);
        }
    }
    if prompt.trim().is_empty() {
        eprintln!("lathe: error: the prompt is empty");
        return EXIT_USAGE;
    }

    tracing::debug!("arguments parsed");
    let prepared = match setup::prepare(&cli).await {
        Ok(prepared) => prepared,
        Err(error) => {
            eprintln!("lathe: error: {error}");
            return match error {
                setup::SetupError::Session(_) => EXIT_FAILED,
                setup::SetupError::Usage(_) | setup::SetupError::Config(_) => EXIT_USAGE,
            };
        }
    };
    tracing::debug!(session = %prepared.session_id, "session ready");
    let mut agent = prepared.agent;
    let printer = Printer::new(cli.output_format, prepared.session_id.clone());
    printer.init(
        &prepared.model,
        &prepared.provider,
        &agent.tools().names(),
        &prepared.cwd.display().to_string(),
    );
    for warning in &prepared.warnings {
        printer.warning(warning);
    }

    let cancel = CancellationToken::new();
    let signalled = watch_signals(cancel.clone());

    let (events, mut receiver) = mpsc::unbounded_channel::<AgentEvent>();
    let printing = tokio::spawn(async move {
        let mut finished = None;
        while let Some(event) = receiver.recv().await {
            printer.event(&event);
            if let AgentEvent::Finished { cause, stats, final_text } = event {
                finished = Some((cause, stats, final_text));
            }
        }
        (printer, finished)
    });
    let outcome = agent.run(UserMessage::text(prompt), &events, &cancel).await;
    drop(events);
    let Ok((printer, finished)) = printing.await else {
        eprintln!("lathe: error: the output task failed");
        return EXIT_FAILED;
    };
    match outcome {
        Err(error) => {
            let cause = StopCause::Error { kind: "session".into(), message: error.to_string() };
            printer.finish(&cause, &agent.stats(), "");
            EXIT_FAILED
        }
        Ok(cause) => {
            if let Some((cause, stats, final_text)) = &finished {
                printer.finish(cause, stats, final_text);
            }
            match (exit_code(&cause), signalled.load(Ordering::SeqCst)) {
                (EXIT_CANCELLED, signal) if signal != 0 => signal,
                (code, _) => code,
            }
        }
    }
}

fn exit_code(cause: &StopCause) -> u8 {
    match cause {
        StopCause::Completed => EXIT_OK,
        StopCause::MaxTurns { .. } | StopCause::Budget { .. } | StopCause::NoProgress { .. } => EXIT_LIMIT,
        StopCause::Cancelled => EXIT_CANCELLED,
        StopCause::Refused => EXIT_FAILED,
        StopCause::Error { .. } => EXIT_API,
    }
}
