//! `lathe`'s side of the model process: start it, send requests and cancels, route its events
//! back to each request's stream (see the module docs of [`crate::child`]).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use lathe_protocol::{ModelEvent, ModelRequest, ProviderError};
use lathe_provider::{ModelStream, Provider};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{FromModel, RUNNER_NAME, ToModel};
use crate::config::LocalConfig;

/// Where a request's events go, and the token that tells its cancel watcher it has ended.
struct Pending {
    events: mpsc::UnboundedSender<ModelEvent>,
    done: CancellationToken,
}

type PendingMap = Arc<Mutex<HashMap<u64, Pending>>>;

/// The local model provider (name `local`) run in the model process. Cheap to share behind an
/// `Arc`; the process serves requests one at a time, in order, keeping its KV cache between them.
pub struct ChildProvider {
    model_name: String,
    max_calls_per_response: u32,
    stdin: Arc<Mutex<ChildStdin>>,
    pending: PendingMap,
    next_id: AtomicU64,
    child: Mutex<Child>,
}

impl std::fmt::Debug for ChildProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildProvider").field("model_name", &self.model_name).finish()
    }
}

fn config_error(message: String) -> ProviderError {
    ProviderError::Config { message }
}

/// The model process's executable: beside the running one, or (for a test or an example, which
/// run from a subdirectory of cargo's target directory) one directory up.
fn runner_path() -> Result<PathBuf, ProviderError> {
    let exe = std::env::current_exe()
        .map_err(|err| config_error(format!("cannot find the running executable: {err}")))?;
    let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    let beside = dir.join(RUNNER_NAME);
    if beside.is_file() {
        return Ok(beside);
    }
    if let Some(up) = dir.parent().map(|up| up.join(RUNNER_NAME)).filter(|up| up.is_file()) {
        return Ok(up);
    }
    Err(config_error(format!(
        "the local model runs in `{RUNNER_NAME}`, which is not beside {} (build it with \
         `cargo build --release --features local` and install it next to lathe)",
        exe.display()
    )))
}

impl ChildProvider {
    /// Starts the model process and waits until it has loaded the model.
    ///
    /// # Errors
    /// `ProviderError::Config` when the model process cannot be found or started, or with the
    /// error the model process met loading the model (the same as [`crate::LocalProvider::new`]).
    pub fn spawn(config: LocalConfig) -> Result<ChildProvider, ProviderError> {
        let runner = runner_path()?;
        let mut child = Command::new(&runner)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|err| config_error(format!("cannot start {}: {err}", runner.display())))?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(config_error("the local model process has no pipes".into()));
        };
        let max_calls_per_response = config.max_calls_per_response;
        let started = serde_json::to_string(&config)
            .map_err(std::io::Error::other)
            .and_then(|line| writeln!(stdin, "{line}").and_then(|()| stdin.flush()));
        let mut stdout = BufReader::new(stdout);
        let loaded = started
            .map_err(|err| config_error(format!("cannot talk to the local model process: {err}")))
            .and_then(|()| first_answer(&mut stdout));
        let model_name = match loaded {
            Ok(name) => name,
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(error);
            }
        };
        let pending: PendingMap = Arc::default();
        let routes = pending.clone();
        std::thread::Builder::new()
            .name("lathe-local-events".into())
            .spawn(move || route_events(stdout, routes))
            .map_err(|err| config_error(format!("cannot start the local model's reader thread: {err}")))?;
        Ok(ChildProvider {
            model_name,
            max_calls_per_response,
            stdin: Arc::new(Mutex::new(stdin)),
            pending,
            next_id: AtomicU64::new(0),
            child: Mutex::new(child),
        })
    }

    /// The model name reported in `Started` events (the GGUF file stem).
    pub fn model_name(&self) -> &str {
        &self.model_name
    }
}

/// The model process's first line: the model's name once loaded, or why it was not.
fn first_answer(stdout: &mut impl BufRead) -> Result<String, ProviderError> {
    let mut line = String::new();
    let read = stdout.read_line(&mut line);
    match read.map(|_| serde_json::from_str::<FromModel>(&line)) {
        Ok(Ok(FromModel::Ready { model_name })) => Ok(model_name),
        Ok(Ok(FromModel::Failed { error })) => Err(error),
        Ok(Ok(FromModel::Event { .. }) | Err(_)) | Err(_) => {
            Err(config_error("the local model process stopped while loading the model".into()))
        }
    }
}

/// Sends each event line to its request's stream until the process's stdout ends; then every
/// stream still open ends (with `IncompleteStream`, as [`crate::provider`]'s streams do when the
/// inference thread stops).
fn route_events(stdout: impl BufRead, pending: PendingMap) {
    for line in stdout.lines() {
        let Ok(line) = line else { break };
        let Ok(FromModel::Event { id, event }) = serde_json::from_str::<FromModel>(&line) else {
            tracing::warn!("local model process: unexpected line ignored");
            continue;
        };
        let terminal = matches!(event, ModelEvent::Stop { .. } | ModelEvent::Error { .. });
        let mut pending = pending.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(route) = pending.get(&id) {
            let _ = route.events.send(event);
        }
        if terminal && let Some(route) = pending.remove(&id) {
            route.done.cancel();
        }
    }
    let mut pending = pending.lock().unwrap_or_else(PoisonError::into_inner);
    for (_, route) in pending.drain() {
        route.done.cancel();
    }
}

/// Writes one line to the model process.
fn send(stdin: &Mutex<ChildStdin>, message: &ToModel) -> std::io::Result<()> {
    let line = serde_json::to_string(message).map_err(std::io::Error::other)?;
    let mut stdin = stdin.lock().unwrap_or_else(PoisonError::into_inner);
    writeln!(stdin, "{line}")?;
    stdin.flush()
}

impl Provider for ChildProvider {
    fn name(&self) -> &str {
        "local"
    }

    /// [`LocalConfig::max_calls_per_response`] (the grammar admits no more), `None` when unlimited.
    fn max_calls_per_response(&self) -> Option<u32> {
        Some(self.max_calls_per_response).filter(|max| *max > 0)
    }

    fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> ModelStream {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (events, receiver) = mpsc::unbounded_channel();
        let done = CancellationToken::new();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, Pending { events: events.clone(), done: done.clone() });
        let message = ToModel::Request { id, request: Box::new(request.clone()) };
        if let Err(err) = send(&self.stdin, &message) {
            self.pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
            let _ = events.send(ModelEvent::Error {
                error: ProviderError::IncompleteStream {
                    detail: format!("the local model process stopped: {err}"),
                },
            });
            return crate::provider::terminated(receiver);
        }
        // Cancelling the request, or dropping its stream, stops the generation.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let stdin = self.stdin.clone();
            runtime.spawn(async move {
                tokio::select! {
                    () = done.cancelled() => return,
                    () = cancel.cancelled() => {}
                    () = events.closed() => {}
                }
                let _ = send(&stdin, &ToModel::Cancel { id });
            });
        }
        crate::provider::terminated(receiver)
    }
}

impl Drop for ChildProvider {
    fn drop(&mut self) {
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn line(message: &FromModel) -> String {
        serde_json::to_string(message).unwrap() + "\n"
    }

    #[test]
    fn the_first_line_says_loaded_or_why_not() {
        let ready = line(&FromModel::Ready { model_name: "qwen".into() });
        assert_eq!(first_answer(&mut ready.as_bytes()).unwrap(), "qwen");
        let error = ProviderError::Config { message: "bad magic".into() };
        let failed = line(&FromModel::Failed { error: error.clone() });
        assert_eq!(first_answer(&mut failed.as_bytes()).unwrap_err(), error);
        assert!(matches!(first_answer(&mut "".as_bytes()), Err(ProviderError::Config { .. })));
    }

    #[test]
    fn the_configuration_line_carries_everything_the_host_set_the_workspace_too() {
        let config = LocalConfig {
            workspace: Some(PathBuf::from("/work/project")),
            answer_bias: 1.5,
            ..LocalConfig::default()
        };
        let sent: LocalConfig = serde_json::from_str(&serde_json::to_string(&config).unwrap()).unwrap();
        assert_eq!(sent, config);
    }

    #[test]
    fn events_reach_their_request_and_open_requests_end_with_the_process() {
        let pending: PendingMap = Arc::default();
        let (first, mut first_events) = mpsc::unbounded_channel();
        let (second, mut second_events) = mpsc::unbounded_channel();
        let (first_done, second_done) = (CancellationToken::new(), CancellationToken::new());
        pending.lock().unwrap().insert(0, Pending { events: first, done: first_done.clone() });
        pending.lock().unwrap().insert(1, Pending { events: second, done: second_done.clone() });
        let started = ModelEvent::Started { model: Some("qwen".into()) };
        let error = ModelEvent::Error { error: ProviderError::Cancelled };
        let stdout = [
            line(&FromModel::Event { id: 0, event: started.clone() }),
            "not json\n".to_string(),
            line(&FromModel::Event { id: 0, event: error.clone() }),
            line(&FromModel::Event { id: 1, event: started.clone() }),
        ]
        .concat();
        route_events(stdout.as_bytes(), pending.clone());
        assert_eq!(first_events.try_recv().unwrap(), started);
        assert_eq!(first_events.try_recv().unwrap(), error);
        assert_eq!(second_events.try_recv().unwrap(), started);
        assert!(first_done.is_cancelled() && second_done.is_cancelled());
        assert!(pending.lock().unwrap().is_empty());
        assert!(second_events.try_recv().is_err(), "the second request's stream is closed");
    }
}
