//! Claims of a final answer that the run does not back: plain English phrase matching, the same
//! answer and ledger always giving the same claims.
//!
//! Flow: the answer is cut into sentences ([`sentences`]: by line, then after `.`, `!` or `?`
//! followed by a space; fenced code is skipped). A question claims nothing. In every other
//! sentence:
//! 1. success phrases are looked for ([`super::phrases`]) — tests pass, it is fixed, works, was
//!    verified, the build succeeds. A phrase does not count when a negation (`not`, `n't`,
//!    `never`, `no`, `unable`, `without`) is among the four words before it in its clause, when a
//!    hedge (`should`, `might`, `will`, `make sure`, `how`…) is before it in its clause, or
//!    a condition (`if`, `once`, `unless`, `whether`, `until`) before it in the sentence. A
//!    sentence with a test or fix claim needs a test or check after the last change that exited
//!    0; one with only a build claim, a build or a test;
//! 2. file names (`app.py`, `src/x.rs`) named as changed — after a change verb (`updated app.py`,
//!    `fixed the bug in app.py`) or before it (`app.py was updated`) — must be among the files
//!    the run changed, or at least appear in a command that ran (which may have changed them).

use std::sync::LazyLock;

use regex_automata::Match;
use regex_automata::meta::{Config, Regex};
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::util::syntax;

use super::phrases::{
    AUXILIARIES, BUILDS, CHANGE_VERBS, CLAUSE_MARKS, CLAUSE_VERBS, CONDITIONS, EXTENSIONS, FIXED_NOUNS,
    HEDGE_PAIRS, HEDGES, NEGATIONS, OBJECT_ENDS, TESTS, WORKS,
};
use super::{Claim, Evidence};

/// What a sentence claims, judged against what the run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Tests pass, it is fixed, works, was verified: needs a passing test or check.
    Tested,
    /// The code builds: needs a passing build or test.
    Built,
}

/// The claims of `answer` that `evidence` does not back, in the answer's order.
pub(super) fn find(answer: &str, evidence: &Evidence) -> Vec<Claim> {
    let mut claims: Vec<Claim> = Vec::new();
    for sentence in sentences(answer) {
        if sentence.trim_end_matches(['*', '`', '"', '\'', ')']).ends_with('?') {
            continue;
        }
        let normal = normalize(sentence);
        let reason = claimed(&normal).and_then(|kind| judge(kind, evidence));
        let files = named_files(sentence).into_iter().filter(|name| !touched(name, evidence));
        let reasons =
            reason.into_iter().chain(files.map(|name| format!("{name} was not changed in this run")));
        for reason in reasons {
            let claim = Claim { sentence: sentence.to_string(), reason };
            if !claims.contains(&claim) {
                claims.push(claim);
            }
        }
    }
    claims
}

/// The sentences of `text`, trimmed, list markers removed, fenced code left out.
pub(super) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let body = strip_marker(trimmed);
        let bytes = body.as_bytes();
        let (mut start, mut at) = (0, 0);
        while at < bytes.len() {
            if !matches!(bytes[at], b'.' | b'!' | b'?') {
                at += 1;
                continue;
            }
            let mut end = at + 1;
            while end < bytes.len()
                && matches!(bytes[end], b'.' | b'!' | b'?' | b'"' | b'\'' | b')' | b'*' | b'`')
            {
                end += 1;
            }
            if end == bytes.len() || bytes[end].is_ascii_whitespace() {
                out.push(body[start..end].trim());
                start = end;
            }
            at = end;
        }
        out.push(body[start..].trim());
    }
    out.retain(|sentence| !sentence.is_empty());
    out
}

/// `line` without a leading list marker, heading or quote mark (`- `, `1. `, `## `, `> `).
fn strip_marker(mut line: &str) -> &str {
    loop {
        let trimmed = line.trim_start();
        let rest = if let Some(rest) = trimmed.strip_prefix(['-', '*', '+', '>', '#']) {
            rest.trim_start_matches('#')
        } else {
            let digits = trimmed.len() - trimmed.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            match trimmed[digits..].strip_prefix(['.', ')']) {
                Some(rest) if digits > 0 => rest,
                _ => return trimmed,
            }
        };
        if !rest.starts_with(char::is_whitespace) {
            return trimmed;
        }
        line = rest;
    }
}

/// `sentence` lowercased, curly apostrophes straightened, emphasis and code marks turned to spaces.
fn normalize(sentence: &str) -> String {
    sentence.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'").replace(['`', '*', '_'], " ")
}

/// The phrase patterns, compiled once per process, on the first answer of a run. ASCII classes
/// (`\b`, `\d`: the phrases are English words), no full DFA, no prefilter and no capture groups:
/// the search is over a few sentences, and with the defaults (Unicode word boundaries, the DFA's
/// determinisation, literal prefilters) compiling them took about 13 million instructions (4 ms)
/// in every run that ends with an answer.
fn compiled(patterns: &[&str]) -> Vec<Regex> {
    patterns
        .iter()
        .filter_map(|pattern| {
            Regex::builder()
                .syntax(syntax::Config::new().unicode(false))
                .configure(
                    Config::new().dfa(false).auto_prefilter(false).which_captures(WhichCaptures::Implicit),
                )
                .build(pattern)
                .ok()
        })
        .collect()
}

static TESTS_RE: LazyLock<Vec<Regex>> = LazyLock::new(|| compiled(TESTS));
static WORKS_RE: LazyLock<Vec<Regex>> = LazyLock::new(|| compiled(WORKS));
static BUILDS_RE: LazyLock<Vec<Regex>> = LazyLock::new(|| compiled(BUILDS));

/// The strongest claim of a normalized sentence: tests or a fix before a build.
fn claimed(normal: &str) -> Option<Kind> {
    let any = |patterns: &[Regex]| {
        patterns.iter().any(|pattern| pattern.find_iter(normal).any(|found| counts(normal, found)))
    };
    if any(&TESTS_RE) || any(&WORKS_RE) {
        Some(Kind::Tested)
    } else if any(&BUILDS_RE) {
        Some(Kind::Built)
    } else {
        None
    }
}

/// Whether the phrase `found` in `normal` is a claim: not negated, hedged or conditional, and not
/// `fixed` describing a thing.
fn counts(normal: &str, found: Match) -> bool {
    let before = &normal[..found.start()];
    if &normal[found.range()] == "fixed" {
        let after = &normal[found.end()..];
        let next = after.split_whitespace().next().unwrap_or("");
        if after.starts_with('-') || FIXED_NOUNS.contains(&next.trim_matches(|c: char| !c.is_alphanumeric()))
        {
            return false;
        }
    }
    let sentence_words = words(before);
    if sentence_words.iter().any(|word| CONDITIONS.contains(word)) {
        return false;
    }
    let clause = clause(before);
    let clause_words = words(clause);
    let hedged = clause_words.iter().any(|word| HEDGES.contains(word))
        || HEDGE_PAIRS
            .iter()
            .any(|pair| clause.contains(&format!(" {pair} ")) || clause.starts_with(&format!("{pair} ")));
    let recent = &clause_words[clause_words.len().saturating_sub(4)..];
    !hedged && !recent.iter().any(|word| is_negation(word))
}

/// The clause `before` ends in: from its last clause mark on.
fn clause(before: &str) -> &str {
    let start = CLAUSE_MARKS.iter().filter_map(|mark| before.rfind(mark).map(|at| at + mark.len())).max();
    &before[start.unwrap_or(0)..]
}

/// The words of `text` without surrounding punctuation (apostrophes kept: `didn't`).
fn words(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''))
        .filter(|word| !word.is_empty())
        .collect()
}

fn is_negation(word: &str) -> bool {
    NEGATIONS.contains(&word)
        || word.ends_with("n't")
        || matches!(
            word,
            "dont"
                | "didnt"
                | "doesnt"
                | "isnt"
                | "wasnt"
                | "cant"
                | "couldnt"
                | "havent"
                | "hasnt"
                | "wont"
                | "arent"
        )
}

/// Why a claim of `kind` lacks evidence, or `None` when the run backs it.
fn judge(kind: Kind, evidence: &Evidence) -> Option<String> {
    let (run, what) = match kind {
        Kind::Tested => (evidence.last_test.as_ref(), "no test"),
        Kind::Built => (evidence.last_build.as_ref(), "no build or test"),
    };
    match run {
        Some(run) if run.passed() => None,
        Some(run) => Some(run.failure()),
        None => Some(match &evidence.last_change {
            Some(path) => format!("{what} ran after the last change to {path}"),
            None => format!("{what} ran in this run"),
        }),
    }
}

/// The file names `sentence` names as changed (see the module docs), each once, in order.
fn named_files(sentence: &str) -> Vec<String> {
    let raw: Vec<&str> = sentence.split_whitespace().collect();
    let cleaned: Vec<String> = raw.iter().map(|word| clean_word(word)).collect();
    let lower: Vec<String> =
        cleaned.iter().map(|word| word.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'")).collect();
    let mut names: Vec<String> = Vec::new();
    for (at, verb) in lower.iter().enumerate() {
        if !CHANGE_VERBS.contains(&verb.as_str()) {
            continue;
        }
        let before: Vec<&str> = lower[at.saturating_sub(4)..at].iter().map(String::as_str).collect();
        if before.iter().any(|word| is_negation(word)) || counts_as_hedged(&before) {
            continue;
        }
        let mut found: Vec<usize> = Vec::new();
        // The object: `updated app.py and tests/test_app.py to …`.
        for next in at + 1..(at + 16).min(raw.len()) {
            let word = lower[next].as_str();
            if OBJECT_ENDS.contains(&word) {
                break;
            }
            if CLAUSE_VERBS.contains(&word) {
                if found.last() == Some(&(next - 1)) {
                    found.pop();
                }
                break;
            }
            if is_file_name(&cleaned[next]) {
                found.push(next);
            }
            if raw[next].ends_with([';', ':']) {
                break;
            }
        }
        // The subject of a passive: `app.py and b.py were updated`, `app.py: fixed …` (not a
        // list of deeds: `ran test.py, fixed the bug`).
        let mut back = at;
        while back > 0 && AUXILIARIES.contains(&lower[back - 1].as_str()) {
            back -= 1;
        }
        if back == at && at > 0 && raw[at - 1].ends_with([',', ';']) {
            back = 0;
        }
        while back > 0 && (is_file_name(&cleaned[back - 1]) || lower[back - 1] == "and") {
            back -= 1;
            if is_file_name(&cleaned[back]) {
                found.push(back);
            }
        }
        found.sort_unstable();
        for index in found {
            let name = cleaned[index].trim_start_matches("./").to_string();
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

fn counts_as_hedged(before: &[&str]) -> bool {
    before.iter().any(|word| HEDGES.contains(word) || CONDITIONS.contains(word))
}

/// `word` without surrounding quotes, brackets, emphasis and punctuation, and without a
/// `:line` suffix (`app.py:12`).
fn clean_word(word: &str) -> String {
    let marks = |c: char| "`'\"()[]{}*,;:!?<>".contains(c) || c == '\u{2019}' || c == '\u{2018}';
    let word = word.trim_start_matches(marks).trim_end_matches(|c: char| marks(c) || c == '.');
    match word.split_once(':') {
        Some((head, tail)) if tail.chars().all(|c| c.is_ascii_digit() || c == ':') => head.to_string(),
        _ => word.to_string(),
    }
}

/// Whether `word` looks like a file name with a known extension (`app.py`, `src/lib.rs`).
fn is_file_name(word: &str) -> bool {
    let Some((stem, extension)) = word.rsplit_once('.') else { return false };
    !stem.is_empty()
        && !stem.ends_with(['/', '.'])
        && !word.contains("://")
        && !word.starts_with('-')
        && stem.chars().any(|c| c.is_alphanumeric())
        && word.chars().all(|c| c.is_alphanumeric() || "_-./~+@".contains(c))
        && EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str())
}

/// Whether the file `name` was changed in the run, or appears in a command that ran.
fn touched(name: &str, evidence: &Evidence) -> bool {
    let same = |path: &str| {
        path == name || path.ends_with(&format!("/{name}")) || name.ends_with(&format!("/{path}"))
    };
    let base = name.rsplit('/').next().unwrap_or(name);
    evidence.changed.iter().any(|path| same(path))
        || evidence.commands.iter().any(|command| command.contains(base))
}

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
