//! `lathe model fetch|path`: the embedded local model's weights.

use lathe_core::host::local::{ModelSize, default_model_path, fetch_model, models_dir};

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
            eprintln!("lathe: fetching {} into {} …", size.file_name(), dest.display());
            match tokio::task::spawn_blocking(move || fetch_model(size, &dest)).await {
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
