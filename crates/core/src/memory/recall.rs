//! Recall: which memories to attach to a prompt, ranked deterministically, and the reminder block
//! that carries them.
//!
//! [`RecallIndex::build`] tokenises every entry once (lowercase, split on non-alphanumerics,
//! stop words dropped, light stemming so `dependencies`/`dependency` and `packages`/`package`
//! meet) into a postings map with term frequencies, name and description terms counting twice.
//! [`RecallIndex::rank`] scores only the entries that share a term with the query: BM25
//! (k1 = 1.2, b = 0.75) times a use boost `1 + 0.1 ln(1 + use_count)` and a recency boost (up to
//! ×1.2 for an entry used or modified today, fading to none at 30 days). Expired entries are never
//! returned; ties go to the smaller id. [`attach`] renders the hits within the byte caps.

use rustc_hash::FxHashMap;

use chrono::{DateTime, NaiveDate, Utc};

pub(crate) use super::terms::stem;
use super::{Entry, MAX_RECALL_BYTES, MAX_RECALL_ENTRIES, MAX_RECALL_ENTRY_BYTES, clean_body, clean_line};

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;
/// Weight of a term in the name or description (a body term counts 1).
const FIELD_WEIGHT: f32 = 2.0;
/// Days over which the recency boost fades out.
const RECENCY_DAYS: f64 = 30.0;
/// The recency boost for an entry used or modified just now.
const MAX_RECENCY_BOOST: f64 = 0.2;
/// Least score returned: below it a match carries no signal (a term in nearly every entry).
pub const MIN_SCORE: f64 = 0.05;

const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but",
    "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "should", "so", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us", "was",
    "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
];

/// [`STOP_WORDS`] for lookup (one hash per word; a binary search compared strings 7 times).
static STOP_SET: std::sync::LazyLock<rustc_hash::FxHashSet<&'static str>> =
    std::sync::LazyLock::new(|| STOP_WORDS.iter().copied().collect());

/// One entry returned by [`RecallIndex::rank`].
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Index into the entries the index was built from.
    pub index: usize,
    /// Its score (higher is better).
    pub score: f64,
    /// The query terms (lowercased words) that matched it.
    pub terms: Vec<String>,
}

/// Term statistics of a set of entries, built once per load and queried per prompt.
#[derive(Debug, Clone, Default)]
pub struct RecallIndex {
    /// Stemmed term → its id, the index into `postings`.
    terms: FxHashMap<String, u32>,
    /// Per term id: (entry index, weighted term frequency).
    postings: Vec<Vec<(u32, f32)>>,
    /// Weighted length of each entry, in terms.
    lengths: Vec<f32>,
    /// Mean of `lengths`.
    average_length: f64,
}

impl RecallIndex {
    /// Indexes `entries` (keep the same slice for [`RecallIndex::rank`] and [`attach`]).
    pub fn build(entries: &[Entry]) -> RecallIndex {
        // Terms are allocated once each (a lookup by `&str` needs no allocation); an entry's own
        // counts are a short list of term ids.
        let mut terms: FxHashMap<String, u32> = FxHashMap::default();
        let mut postings: Vec<Vec<(u32, f32)>> = Vec::new();
        let mut lengths = Vec::with_capacity(entries.len());
        let mut counts: Vec<(u32, f32)> = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            counts.clear();
            let mut length = 0.0f32;
            for (text, weight) in [
                (&entry.meta.name, FIELD_WEIGHT),
                (&entry.meta.description, FIELD_WEIGHT),
                (&entry.body, 1.0),
            ] {
                for_each_term(text, |_, stem| {
                    length += weight;
                    let id = match terms.get(stem) {
                        Some(&id) => id,
                        None => {
                            let id = postings.len() as u32;
                            terms.insert(stem.to_string(), id);
                            postings.push(Vec::new());
                            id
                        }
                    };
                    match counts.iter_mut().find(|(known, _)| *known == id) {
                        Some((_, count)) => *count += weight,
                        None => counts.push((id, weight)),
                    }
                });
            }
            lengths.push(length);
            for &(id, count) in &counts {
                postings[id as usize].push((index as u32, count));
            }
        }
        let total: f64 = lengths.iter().map(|&len| f64::from(len)).sum();
        let average_length = if lengths.is_empty() { 1.0 } else { (total / lengths.len() as f64).max(1.0) };
        RecallIndex { terms, postings, lengths, average_length }
    }

    /// The entries most relevant to `query`, best first, at most [`MAX_RECALL_ENTRIES`]. An entry
    /// sharing no term with the query, scoring under [`MIN_SCORE`] or expired at `now` is never
    /// returned.
    pub fn rank(&self, entries: &[Entry], query: &str, now: DateTime<Utc>) -> Vec<Hit> {
        let mut terms: Vec<(String, String, f64)> = Vec::new();
        for_each_term(query, |word, stem| {
            if !terms.iter().any(|(_, known, _)| known == stem) {
                terms.push((word.to_string(), stem.to_string(), 1.0));
            }
        });
        // A prompt about dependencies should find "we use pnpm": each word of a topic also
        // stands, at a lower weight, for the topic's other words.
        let typed = terms.len();
        for at in 0..typed {
            let word = terms[at].0.clone();
            for related in super::topics::related(&terms[at].1) {
                let stem = stem(related).to_string();
                if !terms.iter().any(|(_, known, _)| *known == stem) {
                    terms.push((format!("{word}~{related}"), stem, super::topics::WEIGHT));
                }
            }
        }
        terms.truncate(64); // matched terms are kept as a bit mask
        let count = self.lengths.len().min(entries.len());
        let documents = self.lengths.len() as f64;
        // Dense accumulators over the entries touched by some query term.
        let mut scores = vec![0.0f64; count];
        let mut matched = vec![0u64; count];
        let mut touched: Vec<u32> = Vec::new();
        for (bit, (_, stem, weight)) in terms.iter().enumerate() {
            let Some(list) = self.terms.get(stem).map(|&id| &self.postings[id as usize]) else { continue };
            let frequency = list.len() as f64;
            let idf = (1.0 + (documents - frequency + 0.5) / (frequency + 0.5)).ln();
            for &(index, tf) in list {
                let i = index as usize;
                if i >= count {
                    continue;
                }
                if matched[i] == 0 {
                    touched.push(index);
                }
                let tf = f64::from(tf);
                let norm = K1 * (1.0 - B + B * f64::from(self.lengths[i]) / self.average_length);
                scores[i] += weight * idf * tf * (K1 + 1.0) / (tf + norm);
                matched[i] |= 1 << bit;
            }
        }
        let mut ranked: Vec<(usize, f64)> = touched
            .into_iter()
            .map(|index| index as usize)
            .filter(|&i| !is_expired(&entries[i], now))
            .map(|i| (i, scores[i] * use_boost(&entries[i]) * recency_boost(&entries[i], now)))
            .filter(|&(_, score)| score >= MIN_SCORE)
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        // Ids are compared only among the entries that can still make the cut (ties included).
        if let Some(&(_, cutoff)) = ranked.get(MAX_RECALL_ENTRIES - 1) {
            ranked.retain(|&(_, score)| score >= cutoff);
        }
        let mut keyed: Vec<(usize, f64, String)> =
            ranked.into_iter().map(|(i, score)| (i, score, entries[i].id())).collect();
        keyed.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.2.cmp(&b.2)));
        keyed.truncate(MAX_RECALL_ENTRIES);
        keyed
            .into_iter()
            .map(|(index, score, _)| Hit {
                index,
                score,
                terms: terms
                    .iter()
                    .enumerate()
                    .filter(|(bit, _)| matched[index] & (1 << bit) != 0)
                    .map(|(_, (word, _, _))| word.clone())
                    .collect(),
            })
            .collect()
    }
}

/// The reminder block for `hits`: `<memory-recall>`, per hit a `## <id> (<type>; source: …)`
/// header (` — possibly stale (a, b changed)` when `stale` returns paths) and its body cut to
/// [`MAX_RECALL_ENTRY_BYTES`], then `</memory-recall>`; at most [`MAX_RECALL_BYTES`] in all, later
/// hits dropped. Empty when there are no hits.
pub fn attach(entries: &[Entry], hits: &[Hit], stale: impl Fn(&Entry) -> Vec<String>) -> String {
    const OPEN: &str = "<memory-recall>\nMemories that may be relevant to this prompt (from earlier sessions; \
                        verify before relying on them):\n";
    const CLOSE: &str = "</memory-recall>\n";
    let mut out = String::from(OPEN);
    let mut any = false;
    for hit in hits {
        let Some(entry) = entries.get(hit.index) else { continue };
        let mut section = format!(
            "\n## {} ({}; source: {})",
            clean_line(&entry.id()),
            entry.meta.kind,
            clean_line(source_of(entry))
        );
        let changed = stale(entry);
        if !changed.is_empty() {
            section.push_str(&format!(" — possibly stale ({} changed)", changed.join(", ")));
        }
        section.push('\n');
        section.push_str(&clean_body(&cut_body(entry)));
        section.push('\n');
        if out.len() + section.len() + CLOSE.len() > MAX_RECALL_BYTES {
            break;
        }
        out.push_str(&section);
        any = true;
    }
    if !any {
        return String::new();
    }
    out.push_str(CLOSE);
    out
}

fn source_of(entry: &Entry) -> &str {
    if entry.meta.source.is_empty() { "unknown" } else { &entry.meta.source }
}

/// The body within [`MAX_RECALL_ENTRY_BYTES`], a note pointing at the file when cut.
fn cut_body(entry: &Entry) -> String {
    if entry.body.len() <= MAX_RECALL_ENTRY_BYTES {
        return entry.body.clone();
    }
    let note = format!("\n[… cut; view {} for the rest]", entry.virtual_path());
    let mut end = MAX_RECALL_ENTRY_BYTES.saturating_sub(note.len());
    while !entry.body.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{note}", &entry.body[..end])
}

fn use_boost(entry: &Entry) -> f64 {
    1.0 + 0.1 * (1.0 + f64::from(entry.meta.use_count)).ln()
}

fn recency_boost(entry: &Entry, now: DateTime<Utc>) -> f64 {
    let latest = [entry.meta.last_used.as_deref(), Some(entry.meta.modified.as_str())]
        .into_iter()
        .flatten()
        .filter_map(parse_time)
        .max();
    let Some(latest) = latest else { return 1.0 };
    let days = ((now - latest).num_seconds() as f64 / 86_400.0).max(0.0);
    if days >= RECENCY_DAYS { 1.0 } else { 1.0 + MAX_RECENCY_BOOST * (1.0 - days / RECENCY_DAYS) }
}

/// Whether the entry's `expires` is at or before `now`.
pub fn is_expired(entry: &Entry, now: DateTime<Utc>) -> bool {
    entry.meta.expires.as_deref().and_then(parse_time).is_some_and(|expires| expires <= now)
}

/// An RFC 3339 time, or a date (`2025-12-31`, meaning its first instant, UTC).
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Some(time.with_timezone(&Utc));
    }
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    Some(date.and_hms_opt(0, 0, 0)?.and_utc())
}

/// Calls `f(word, stem)` for each indexed word of `text` (lowercased, stop words dropped).
fn for_each_term(text: &str, mut f: impl FnMut(&str, &str)) {
    let mut word = String::new();
    for piece in text.split(|c: char| !c.is_alphanumeric()) {
        word.clear();
        if piece.is_ascii() {
            // Most memory text is ASCII: lowercase in place, no per-character decoding.
            if piece.len() < 2 {
                continue;
            }
            word.push_str(piece);
            word.make_ascii_lowercase();
        } else {
            word.extend(piece.chars().flat_map(char::to_lowercase));
            if word.chars().count() < 2 {
                continue;
            }
        }
        if STOP_SET.contains(word.as_str()) {
            continue;
        }
        f(&word, stem(&word));
    }
}

#[cfg(test)]
#[path = "recall_tests.rs"]
mod tests;
