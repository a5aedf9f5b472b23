//! The prompt-prefix cache on disk: the KV state of the system turn, shared between processes.
//!
//! Every `lathe` process starts with an empty KV cache, and the system turn (Lathe's local core
//! prompt and the tools block, about 1 200 tokens) is byte-identical from one run to the next.
//! The engine saves the llama.cpp sequence state of that prefix (`llama_state_seq_save_file`: the
//! prefix's token ids, then the keys and values of every layer) to one file per prefix, and a
//! later process loads it instead of evaluating the prefix again.
//!
//! A file is named by a SHA-256 over [`FORMAT`], the model file's identity (path, size in bytes,
//! modification time), the KV-relevant context parameters ([`KvParams`]) and the prefix's token
//! ids, so a changed model, context size or prompt never finds an old file. Even so, the engine
//! uses a file only after the token ids it holds equal the prefix. Files are written to a
//! temporary file in the same directory and renamed into place, so a concurrent process never
//! reads half a file. llama.cpp aborts the process on some damaged files (a truncated one fails
//! an assertion), so each file ends with a [`TRAILER_BYTES`]-byte trailer after llama.cpp's data
//! (which it ignores): the SHA-256 of that data, its length and a magic; a file is handed to
//! llama.cpp only after [`check`] verified them. The directory keeps at most [`PromptCache::max_files`] files; loading a
//! file refreshes its modification time and the least recently used ones are deleted. Sizes: the
//! 1.5B model's keys and values take 28 KiB per token in f16 (34 MB for its system turn of 1 197 tokens),
//! the 0.5B's 12 KiB.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use lathe_protocol::ProviderError;
use llama_cpp_2::token::LlamaToken;
use sha2::{Digest, Sha256};

use super::Engine;
use crate::provider::Job;

/// Version of the file naming and content; bump it when either changes.
const FORMAT: &str = "lathe-prompt-cache-1";
/// Extension of a cache file.
const EXTENSION: &str = "kv";
/// Prefix of the temporary files a save writes before renaming them.
const TEMP_PREFIX: &str = ".tmp-";
/// A temporary file older than this was left by a process that died while saving: deleted.
const STALE_TEMP: Duration = Duration::from_secs(600);
/// The last bytes of a cache file: SHA-256 (32 bytes), the data's length (u64 little-endian),
/// [`TRAILER_MAGIC`].
pub(crate) const TRAILER_BYTES: usize = 32 + 8 + 8;
/// Magic at the end of a cache file.
const TRAILER_MAGIC: &[u8; 8] = b"LATHEKV1";
/// Cache files kept per directory by default.
pub(crate) const DEFAULT_MAX_FILES: usize = 8;

/// The llama.cpp context parameters that decide the layout of the KV state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KvParams {
    /// Context window in tokens (`n_ctx`).
    pub context_tokens: u32,
    /// Tokens per `llama_decode` batch (`n_batch` = `n_ubatch`).
    pub batch_tokens: u32,
}

/// Where prefix states of one model and context live, and how they are named.
#[derive(Debug, Clone)]
pub(crate) struct PromptCache {
    dir: PathBuf,
    /// SHA-256 state over the format, the model's identity and the KV parameters; the prefix's
    /// tokens are added per file.
    key: Sha256,
    /// Files kept at most (the least recently used beyond this are deleted after a save).
    pub max_files: usize,
}

impl PromptCache {
    /// The cache in `dir` for the model file at `model` (read for its size and modification
    /// time) and `params`.
    ///
    /// # Errors
    /// The model file's metadata cannot be read.
    pub(crate) fn new(dir: PathBuf, model: &Path, params: KvParams) -> io::Result<PromptCache> {
        let metadata = fs::metadata(model)?;
        let modified = metadata
            .modified()?
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|since| since.as_nanos())
            .unwrap_or(0);
        let path = fs::canonicalize(model).unwrap_or_else(|_| model.to_path_buf());
        let mut key = Sha256::new();
        for part in [
            FORMAT.as_bytes(),
            path.to_string_lossy().as_bytes(),
            &metadata.len().to_le_bytes(),
            &modified.to_le_bytes(),
            &params.context_tokens.to_le_bytes(),
            &params.batch_tokens.to_le_bytes(),
        ] {
            key.update((part.len() as u64).to_le_bytes());
            key.update(part);
        }
        Ok(PromptCache { dir, key, max_files: DEFAULT_MAX_FILES })
    }

    /// The directory holding the files.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file holding the state of `prefix` (token ids): `<dir>/<64 hex digits>.kv`.
    pub(crate) fn file_for(&self, prefix: &[i32]) -> PathBuf {
        let mut hash = self.key.clone();
        hash.update((prefix.len() as u64).to_le_bytes());
        for token in prefix {
            hash.update(token.to_le_bytes());
        }
        self.dir.join(format!("{}.{EXTENSION}", hex::encode(hash.finalize())))
    }

    /// Creates the directory and a temporary file in it to save a state to (deleted when dropped
    /// unless persisted).
    ///
    /// # Errors
    /// The directory cannot be created or written.
    pub(crate) fn temp_file(&self) -> io::Result<tempfile::NamedTempFile> {
        fs::create_dir_all(&self.dir)?;
        tempfile::Builder::new().prefix(TEMP_PREFIX).suffix(".part").tempfile_in(&self.dir)
    }

    /// Marks `file` as just used (its modification time is the recency eviction goes by).
    pub(crate) fn touch(file: &Path) {
        let touched =
            fs::File::options().append(true).open(file).and_then(|f| f.set_modified(SystemTime::now()));
        if let Err(err) = touched {
            tracing::debug!(file = %file.display(), %err, "cannot refresh a prompt cache file's time");
        }
    }

    /// Deletes the least recently used cache files beyond [`PromptCache::max_files`] and
    /// temporary files older than ten minutes; returns the number deleted.
    pub(crate) fn evict(&self) -> usize {
        let Ok(entries) = fs::read_dir(&self.dir) else { return 0 };
        let now = SystemTime::now();
        let mut files: Vec<(SystemTime, PathBuf)> = Vec::new();
        let mut deleted = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(metadata) = entry.metadata() else { continue };
            if !metadata.is_file() {
                continue;
            }
            let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(TEMP_PREFIX) {
                let age = now.duration_since(modified).unwrap_or_default();
                if age > STALE_TEMP && fs::remove_file(&path).is_ok() {
                    deleted += 1;
                }
            } else if path.extension().is_some_and(|ext| ext == EXTENSION) {
                files.push((modified, path));
            }
        }
        // Newest first; everything after the first `max_files` goes.
        files.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
        for (_, path) in files.into_iter().skip(self.max_files) {
            match fs::remove_file(&path) {
                Ok(()) => deleted += 1,
                Err(err) => {
                    tracing::debug!(file = %path.display(), %err, "cannot delete a prompt cache file")
                }
            }
        }
        deleted
    }
}

impl Engine<'_> {
    /// The prompt cache step of a process's first request (the KV cache is empty): loads the
    /// system turn of `tokens` from disk into sequence 0, or evaluates it and saves it. Returns
    /// the number of tokens evaluated here (0 when loaded, or when the cache is off or the prompt
    /// has no system turn to cache). A file that is damaged, cannot be loaded or holds other
    /// tokens is ignored (the KV cache is cleared, the file replaced); a failed save is logged.
    /// Only evaluation errors fail.
    pub(super) fn prompt_prefix(&mut self, tokens: &[LlamaToken], job: &Job) -> Result<usize, ProviderError> {
        let Some((cache, end_of_turn)) = &self.prompt_cache else { return Ok(0) };
        let ids: Vec<i32> = tokens.iter().map(|token| token.0).collect();
        let Some(len) = prefix_len(&ids, end_of_turn.0) else { return Ok(0) };
        let file = cache.file_for(&ids[..len]);
        let prefix = &tokens[..len];
        if file.is_file() {
            let loaded = check(&file)
                .and_then(|()| self.ctx.state_seq_load_file(&file, 0, len).map_err(|err| err.to_string()));
            match loaded {
                Ok((loaded, bytes)) if loaded == prefix => {
                    self.cached = loaded;
                    PromptCache::touch(&file);
                    tracing::info!(
                        tokens = len,
                        bytes,
                        file = %file.display(),
                        "local prompt prefix loaded from disk"
                    );
                    return Ok(0);
                }
                Ok((loaded, _)) => tracing::warn!(
                    file = %file.display(),
                    expected = len,
                    found = loaded.len(),
                    "prompt cache file holds other tokens; evaluating the prompt"
                ),
                Err(err) => tracing::warn!(
                    file = %file.display(),
                    %err,
                    "cannot load the prompt cache file; evaluating the prompt"
                ),
            }
            self.forget_cache();
        }
        self.evaluate(prefix, job)?;
        self.save_prefix(&file, len);
        Ok(len)
    }

    /// Saves the first `len` cached tokens' state to `file` (a temporary file, sealed with its
    /// trailer, renamed into place), then evicts old files. Failures are logged, never returned.
    fn save_prefix(&self, file: &Path, len: usize) {
        let Some((cache, _)) = &self.prompt_cache else { return };
        let saved = cache.temp_file().map_err(|err| err.to_string()).and_then(|temp| {
            self.ctx
                .state_seq_save_file(temp.path(), 0, &self.cached[..len])
                .map_err(|err| err.to_string())?;
            seal(temp.path()).map_err(|err| err.to_string())?;
            temp.persist(file).map_err(|err| err.to_string())?;
            fs::metadata(file).map(|metadata| metadata.len()).map_err(|err| err.to_string())
        });
        match saved {
            Ok(bytes) => {
                let evicted = cache.evict();
                tracing::info!(
                    tokens = len,
                    bytes,
                    evicted,
                    file = %file.display(),
                    "local prompt prefix saved to disk"
                );
            }
            Err(err) => tracing::warn!(
                dir = %cache.dir().display(),
                %err,
                "cannot save the prompt prefix; the next process evaluates it again"
            ),
        }
    }
}

/// Appends the trailer (the SHA-256 and the length of the file's bytes so far) to the file at
/// `path`, which llama.cpp just wrote.
///
/// # Errors
/// The file cannot be read or appended to.
pub(crate) fn seal(path: &Path) -> io::Result<()> {
    let data = fs::read(path)?;
    let mut trailer = Vec::with_capacity(TRAILER_BYTES);
    trailer.extend_from_slice(&Sha256::digest(&data));
    trailer.extend_from_slice(&(data.len() as u64).to_le_bytes());
    trailer.extend_from_slice(TRAILER_MAGIC);
    io::Write::write_all(&mut fs::File::options().append(true).open(path)?, &trailer)
}

/// Verifies the trailer [`seal`] wrote: the file is whole and unchanged. Reads the whole file
/// (tens of MB: a fraction of a second, against seconds to evaluate the prefix).
///
/// # Errors
/// A description of what does not match (or the read error).
pub(crate) fn check(path: &Path) -> Result<(), String> {
    let file = fs::read(path).map_err(|err| err.to_string())?;
    let Some(data_len) = file.len().checked_sub(TRAILER_BYTES) else {
        return Err(format!("{} bytes: shorter than the trailer", file.len()));
    };
    let (data, trailer) = file.split_at(data_len);
    let (digest, rest) = trailer.split_at(32);
    let (length, magic) = rest.split_at(8);
    if magic != TRAILER_MAGIC {
        return Err("no trailer (truncated, or not written by Lathe)".into());
    }
    let mut length_bytes = [0u8; 8];
    length_bytes.copy_from_slice(length);
    let length = u64::from_le_bytes(length_bytes);
    if length != data_len as u64 {
        return Err(format!("{data_len} bytes of data, the trailer says {length}"));
    }
    if Sha256::digest(data).as_slice() != digest {
        return Err("the data does not match its SHA-256".into());
    }
    Ok(())
}

/// Length in tokens of the cached prefix of `tokens`: up to and including the first
/// `end_of_turn` token (the end of the system turn). `None` when there is none, or nothing after
/// it (the prompt must go on, or there is nothing to reuse the prefix for).
pub(crate) fn prefix_len(tokens: &[i32], end_of_turn: i32) -> Option<usize> {
    let end = tokens.iter().position(|&token| token == end_of_turn)? + 1;
    (end < tokens.len()).then_some(end)
}

#[cfg(test)]
#[path = "prompt_cache_tests.rs"]
mod tests;
