//! Whole-file JSON state of a team (the board, the roster, a read cursor, the file owners):
//! read, and replaced atomically (written to a temporary file beside it, synced, renamed over it),
//! so a crash leaves the old or the new version, never a torn one.

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::TeamError;

/// The value in `path`; `None` when the file does not exist.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, TeamError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(TeamError::Io { path: path.to_path_buf(), error }),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|error| TeamError::Corrupt { path: path.to_path_buf(), detail: error.to_string() })
}

/// Replaces `path` with `value` as JSON, atomically and durably.
pub fn write<T: Serialize>(path: &Path, value: &T) -> Result<(), TeamError> {
    let io = |error| TeamError::Io { path: path.to_path_buf(), error };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let text = serde_json::to_vec_pretty(value)
        .map_err(|error| TeamError::Corrupt { path: path.to_path_buf(), detail: error.to_string() })?;
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    temp.write_all(&text).map_err(io)?;
    temp.as_file().sync_data().map_err(io)?;
    temp.persist(path).map_err(|error| io(error.error))?;
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}
