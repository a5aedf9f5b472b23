//! The model process's side (feature `llama`): load the model with [`LocalProvider`], then serve
//! the requests `lathe` writes on stdin, writing their events on stdout (see the module docs of
//! [`crate::child`]).

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use lathe_provider::Provider;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{FromModel, ToModel};
use crate::LocalProvider;
use crate::config::LocalConfig;

/// Writes one line to `lathe`; false when it is gone.
fn answer(message: &FromModel) -> bool {
    let Ok(line) = serde_json::to_string(message) else { return true };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}").and_then(|()| stdout.flush()).is_ok()
}

/// Runs the model process: reads the configuration line, loads the model, answers `ready` or
/// `failed`, then serves requests until stdin ends. Returns the process's exit status (0 after
/// serving, 1 when the model could not be loaded or the configuration could not be read).
pub fn serve() -> u8 {
    let mut first = String::new();
    // Stdin's buffer is the process's: what this read takes beyond the first line is still there
    // for the reader thread below.
    let config = match std::io::stdin()
        .lock()
        .read_line(&mut first)
        .map(|_| serde_json::from_str::<LocalConfig>(&first))
    {
        Ok(Ok(config)) => config,
        Ok(Err(err)) => {
            let message = format!("the local model process got no configuration: {err}");
            answer(&FromModel::Failed { error: lathe_protocol::ProviderError::Config { message } });
            return 1;
        }
        Err(_) => return 1,
    };
    let provider = match LocalProvider::new(config) {
        Ok(provider) => Arc::new(provider),
        Err(error) => {
            answer(&FromModel::Failed { error });
            return 1;
        }
    };
    if !answer(&FromModel::Ready { model_name: provider.model_name().to_string() }) {
        return 0;
    }
    let (lines, mut messages) = mpsc::unbounded_channel::<ToModel>();
    let reader = std::thread::Builder::new().name("lathe-local-requests".into()).spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            match serde_json::from_str::<ToModel>(&line) {
                Ok(message) => {
                    if lines.send(message).is_err() {
                        break;
                    }
                }
                Err(err) => tracing::warn!(%err, "local model process: a line that is no request ignored"),
            }
        }
    });
    if reader.is_err() {
        return 1;
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return 1 };
    runtime.block_on(async move {
        let running: Arc<Mutex<HashMap<u64, CancellationToken>>> = Arc::default();
        while let Some(message) = messages.recv().await {
            match message {
                ToModel::Request { id, request } => {
                    let cancel = CancellationToken::new();
                    running.lock().unwrap_or_else(PoisonError::into_inner).insert(id, cancel.clone());
                    let (provider, running) = (provider.clone(), running.clone());
                    tokio::spawn(async move {
                        let mut events = provider.stream(&request, cancel);
                        while let Some(event) = events.next().await {
                            // `lathe` gone: its stdin has ended too, so the loop ends.
                            if !answer(&FromModel::Event { id, event }) {
                                break;
                            }
                        }
                        running.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
                    });
                }
                ToModel::Cancel { id } => {
                    if let Some(cancel) = running.lock().unwrap_or_else(PoisonError::into_inner).get(&id) {
                        cancel.cancel();
                    }
                }
            }
        }
    });
    0
}
