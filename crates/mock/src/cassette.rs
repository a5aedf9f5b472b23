//! Cassette mode: recorded provider responses served byte for byte.
//!
//! A cassette directory holds `manifest.json` (a JSON array of entries: `file`, `protocol`, `status`,
//! `headers`, and more fields this server ignores) and the files it names. Every body is read into memory at
//! load time, so a missing file is reported before the server starts. `POST /cassette/<file>/<suffix>` serves
//! the entry `<file>`: its status, its recorded headers and its bytes, unchanged.

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;
use serde::Deserialize;

use crate::{MockError, Protocol, read_text};

/// One served recording.
#[derive(Debug, Clone)]
pub struct CassetteEntry {
    /// Path relative to the cassette directory, e.g. `anthropic/tool-use-only.sse`.
    pub file: String,
    /// The protocol of the recording (from the manifest).
    pub protocol: Option<Protocol>,
    /// HTTP status to serve.
    pub status: u16,
    /// Response headers to serve (lower-case names).
    pub headers: BTreeMap<String, String>,
    /// The body bytes, verbatim.
    pub body: Bytes,
}

/// Every entry of a cassette manifest, bodies loaded.
#[derive(Debug, Clone, Default)]
pub struct CassetteSet {
    entries: BTreeMap<String, CassetteEntry>,
}

#[derive(Deserialize)]
struct ManifestEntry {
    file: String,
    #[serde(default)]
    protocol: Option<Protocol>,
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

impl CassetteSet {
    /// Loads `dir/manifest.json` and every file it lists.
    ///
    /// # Errors
    /// [`MockError::Io`] for an unreadable manifest or body file, [`MockError::Json`] for a manifest that is
    /// not a list of entries, [`MockError::Invalid`] for an entry path that leaves the directory or a bad
    /// status.
    pub fn load(dir: &Path) -> Result<CassetteSet, MockError> {
        let manifest_path = dir.join("manifest.json");
        let text = read_text(&manifest_path)?;
        let manifest: Vec<ManifestEntry> = serde_json::from_str(&text).map_err(|source| MockError::Json {
            what: "cassette manifest",
            path: Some(manifest_path.clone()),
            source,
        })?;
        let mut entries = BTreeMap::new();
        for m in manifest {
            let invalid = |detail: String| MockError::Invalid {
                what: "cassette manifest",
                detail: format!("{}: {detail}", m.file),
            };
            if m.file.split('/').any(|part| part == ".." || part.is_empty()) || m.file.starts_with('/') {
                return Err(invalid("the file path must stay inside the cassette directory".into()));
            }
            if !(100..=599).contains(&m.status) {
                return Err(invalid(format!("status {} is not an HTTP status", m.status)));
            }
            let path = dir.join(&m.file);
            let body = std::fs::read(&path).map_err(|source| MockError::Io { path, source })?;
            let headers = m.headers.into_iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
            entries.insert(
                m.file.clone(),
                CassetteEntry {
                    file: m.file,
                    protocol: m.protocol,
                    status: m.status,
                    headers,
                    body: Bytes::from(body),
                },
            );
        }
        Ok(CassetteSet { entries })
    }

    /// The entry for `file`, if the manifest lists it.
    pub fn get(&self, file: &str) -> Option<&CassetteEntry> {
        self.entries.get(file)
    }

    /// All entries, ordered by file name.
    pub fn entries(&self) -> impl Iterator<Item = &CassetteEntry> {
        self.entries.values()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the manifest was empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The cassette file named by a request path `/cassette/<file>/<protocol suffix>`, if the path has that form.
/// A trailing `/v1` before the suffix is tolerated (an OpenAI base URL of `…/<file>/v1`).
pub(crate) fn file_of_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/cassette/")?;
    let rest = rest.trim_end_matches('/');
    let protocol = Protocol::from_path(&format!("/{rest}"))?;
    let file = rest.strip_suffix(protocol.path_suffix().trim_start_matches('/'))?;
    let file = file.trim_end_matches('/');
    let file = file.strip_suffix("/v1").unwrap_or(file);
    (!file.is_empty()).then(|| file.to_string())
}
