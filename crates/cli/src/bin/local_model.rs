//! `lathe-local-model`: the embedded local model's process. `lathe` starts it when the local
//! provider is chosen and talks to it over its stdin and stdout (one JSON object per line, see
//! `lathe_local::child`); it is not meant to be run by hand. It links llama.cpp so that `lathe`
//! itself does not.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Diagnostics (llama.cpp's log included) go to `LATHE_LOG`, as `lathe`'s do.
    if let Some(path) = std::env::var_os("LATHE_LOG")
        && let Ok(file) = std::fs::OpenOptions::new().create(true).append(true).open(path)
    {
        let filter = tracing_subscriber::EnvFilter::try_from_env("LATHE_LOG_LEVEL")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        let _ =
            tracing_subscriber::fmt().with_env_filter(filter).with_ansi(false).with_writer(file).try_init();
    }
    ExitCode::from(lathe_core::host::local::serve_model_process())
}
