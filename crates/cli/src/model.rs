//! `lathe model fetch|path`: the embedded local model's weights.

use std::io::{IsTerminal, Write};

use lathe_core::host::local::{
    FetchProgress, ModelSize, default_model_path, fetch_model_with_progress, models_dir,
};

use crate::args::{EXIT_FAILED, EXIT_OK, EXIT_USAGE, ModelAction};

/// Runs `lathe model …`.
pub async fn model_command(action: &ModelAction) -> u8 {
    let size = match action {
        ModelAction::Fetch { size } | ModelAction::Path { size } => size,
    };
    let size: ModelSize = match size.parse() {
        Ok(size) => size,
        Err(error) => {
            eprintln!("lathe: error: {error}");
            return EXIT_USAGE;
        }
    };
    match action {
        ModelAction::Path { .. } => {
            println!("{}", default_model_path(size).display());
            EXIT_OK
        }
        ModelAction::Fetch { .. } => {
            let dest = models_dir();
            let shown = dest.display().to_string();
            let fetched = tokio::task::spawn_blocking(move || {
                let last = std::sync::Mutex::new(None);
                fetch_model_with_progress(size, &dest, &|progress| report(size, &shown, progress, &last))
            });
            match fetched.await {
                Ok(Ok(path)) => {
                    println!("{}", path.display());
                    EXIT_OK
                }
                Ok(Err(error)) => {
                    eprintln!("lathe: error: {error}");
                    EXIT_FAILED
                }
                Err(error) => {
                    eprintln!("lathe: error: the download task failed: {error}");
                    EXIT_FAILED
                }
            }
        }
    }
}

const MB: f64 = 1_000_000.0;

/// Prints fetch progress on stderr: "already cached", the bytes downloaded and the rate (redrawn in
/// place on a terminal, one line per finished part otherwise), then "verifying".
fn report(size: ModelSize, dir: &str, progress: FetchProgress, last: &std::sync::Mutex<Option<u64>>) {
    let terminal = std::io::stderr().is_terminal();
    let mut err = std::io::stderr().lock();
    match progress {
        FetchProgress::Cached => {
            let _ =
                writeln!(err, "lathe: {} is already cached in {dir} (SHA-256 verified)", size.file_name());
        }
        FetchProgress::Downloading { bytes, total, elapsed } => {
            let mut last = match last.lock() {
                Ok(last) => last,
                Err(poisoned) => poisoned.into_inner(),
            };
            if last.is_none() {
                let _ = writeln!(
                    err,
                    "lathe: downloading {} ({:.0} MB) into {dir}",
                    size.file_name(),
                    total as f64 / MB
                );
            }
            if !terminal && *last == Some(bytes) {
                return;
            }
            *last = Some(bytes);
            let rate = bytes as f64 / MB / elapsed.as_secs_f64().max(0.001);
            let line = format!(
                "  {:.0} MB of {:.0} MB · {rate:.1} MB/s · {} s",
                bytes as f64 / MB,
                total as f64 / MB,
                elapsed.as_secs()
            );
            if terminal {
                let _ = write!(err, "\r\x1b[2K{line}");
            } else {
                let _ = writeln!(err, "{line}");
            }
        }
        FetchProgress::Verifying => {
            let end = if terminal { "\n" } else { "" };
            let _ = writeln!(err, "{end}lathe: joining the parts and checking the SHA-256 …");
        }
    }
    let _ = err.flush();
}
