//! What long-term memory (FEATURES.md §I) leaves in the ledger: each change the `memory` tool made
//! ([`MemoryWrite`]), each write it refused because a value looked like a secret
//! ([`MemoryRefusal`]), and the entries attached to a user message ([`MemoryRecall`]). All are
//! [`crate::Meta`] items: saved, never sent.

use serde::{Deserialize, Serialize};

/// One file the `memory` tool changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryWrite {
    /// The tool call that made the change.
    pub call_id: String,
    /// The entry's id (`project/pnpm`), or `index/<scope>` for a scope's `MEMORY.md`.
    pub id: String,
    /// The file's absolute path.
    pub path: String,
    /// SHA-256 (hex) of the bytes before the change; `None` when the file did not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// SHA-256 (hex) of the bytes after the change; `None` when the change deleted the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// A memory write refused before anything was written: a value looked like a secret. The value
/// itself is never recorded (the call's arguments in the ledger are redacted too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRefusal {
    /// The tool call refused.
    pub call_id: String,
    /// What the values looked like (`aws-access-key-id`, `github-token`, …).
    pub kinds: Vec<String>,
}

/// The entries recall attached to one user message, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecall {
    /// 1-based user turn.
    pub turn: u32,
    /// The entries given, best first.
    pub entries: Vec<RecalledEntry>,
}

/// One recalled entry and why it was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecalledEntry {
    /// The entry's id (`project/pnpm`).
    pub id: String,
    /// Its ranking score (BM25 with use and recency boosts).
    pub score: f64,
    /// The prompt's terms it matched (stemmed, lowercase).
    pub terms: Vec<String>,
    /// Evidence files changed since the entry was written (it was shown as possibly stale).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale: Vec<String>,
}
