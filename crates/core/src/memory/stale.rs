//! Evidence: the files a memory is about, pinned by git blob id (`src/lib.rs@<sha1>`), so recall
//! can say a memory is possibly stale when one of them changed.
//!
//! Blob ids are computed from the working tree's bytes as `git hash-object` does (no clean
//! filters or line-ending conversion). Evidence paths are relative to the repository root and
//! may not leave it: absolute paths, `..` and symbolic links are never read.

use std::path::{Component, Path, PathBuf};

use sha1::{Digest, Sha1};

/// Largest evidence file hashed, in bytes; a larger one counts as missing.
pub const MAX_EVIDENCE_BYTES: u64 = 16 * 1024 * 1024;

/// The git blob id of `bytes`: SHA-1 of `blob <len>\0<bytes>`, 40 lowercase hex digits.
pub fn git_blob_id(bytes: &[u8]) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hex::encode(hasher.finalize())
}

/// The evidence paths (the part before `@`) whose file is now missing or has another blob id.
/// Bare paths (no `@`) and paths that would leave `repo_root` are not checked.
pub fn stale_evidence(repo_root: &Path, evidence: &[String]) -> Vec<String> {
    let mut stale = Vec::new();
    for item in evidence {
        let Some((path, blob)) = item.rsplit_once('@') else { continue };
        if check_path(path).is_err() {
            continue;
        }
        if current_blob(repo_root, path).as_deref() != Some(blob.trim()) {
            stale.push(path.to_string());
        }
    }
    stale
}

/// `evidence` with each bare `path` pinned to its current file as `path@<blob id>`; entries that
/// already have a blob id, and paths that do not exist or may not be read, are kept as given.
pub fn fill_evidence(repo_root: &Path, evidence: &[String]) -> Vec<String> {
    evidence
        .iter()
        .map(|item| {
            let path = item.trim();
            if path.contains('@') || check_path(path).is_err() {
                return item.clone();
            }
            match current_blob(repo_root, path) {
                Some(blob) => format!("{path}@{blob}"),
                None => path.to_string(),
            }
        })
        .collect()
}

/// Why `path` cannot be an evidence path (absolute, `..`, `.`, empty), if it cannot.
pub fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("an evidence path is empty".to_string());
    }
    if path.contains('\\') || path.contains('\0') {
        return Err(format!("evidence path `{path}` holds a backslash or NUL; use / between folders"));
    }
    for component in Path::new(path).components() {
        match component {
            Component::Normal(_) => {}
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "evidence path `{path}` is absolute; give it relative to the repository root"
                ));
            }
            Component::ParentDir | Component::CurDir => {
                return Err(format!(
                    "evidence path `{path}` holds `.` or `..`; give it relative to the repository root"
                ));
            }
        }
    }
    Ok(())
}

/// The blob id of `repo_root/path`, when it is a regular file reached without symbolic links.
fn current_blob(repo_root: &Path, path: &str) -> Option<String> {
    let mut full = PathBuf::from(repo_root);
    for part in path.split('/').filter(|part| !part.is_empty()) {
        full.push(part);
        if std::fs::symlink_metadata(&full).ok()?.file_type().is_symlink() {
            return None;
        }
    }
    let meta = std::fs::metadata(&full).ok()?;
    if !meta.is_file() || meta.len() > MAX_EVIDENCE_BYTES {
        return None;
    }
    std::fs::read(&full).ok().map(|bytes| git_blob_id(&bytes))
}

#[cfg(test)]
#[path = "stale_tests.rs"]
mod tests;
