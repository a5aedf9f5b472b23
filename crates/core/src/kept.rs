//! Files the prompt says not to change (`do not change the test`, `don't modify config.py`, `leave
//! app.py unchanged`). With verify-before-claiming on (the local profile), `edit_file` and
//! `write_file` calls on them are answered, not run, for the rest of the user turn
//! ([`crate::guards::CallGuard`]): a small model told to fix the code so a test passes edits the test
//! instead, again and again, however the prompt is worded. The refusal names the file the prompt
//! points at instead, when it names exactly one other.
//!
//! "The test" (or "tests", "test file") means the test files the prompt names, a command it names
//! included (`python3 test_calc.py`): `test_*`, `*_test.*`, `*.test.*`, `*_spec.*`, or under a
//! `tests/` folder. Shell commands are not judged: what they write is not known before they run.

/// Files a user turn must not change, and the one the prompt points at instead.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeptFiles {
    /// Paths as the prompt names them, relative to the workspace (`test_calc.py`, `tests/a.py`).
    pub(crate) paths: Vec<String>,
    /// The only other file the prompt names, if there is one.
    pub(crate) instead: Option<String>,
}

/// Verbs of a change, after `do not`, `don't`, `never`.
const CHANGE_VERBS: [&str; 8] = ["change", "modify", "edit", "touch", "alter", "rewrite", "update", "delete"];

/// What may follow `leave X` or `keep X` to say it stays as it is.
const UNCHANGED: [&str; 6] = ["unchanged", "alone", "as is", "as it is", "untouched", "the same"];

impl KeptFiles {
    /// The files `prompt` says not to change (see the module docs); none when it says nothing of
    /// the kind.
    pub(crate) fn from_prompt(prompt: &str) -> KeptFiles {
        let named = file_names(prompt);
        let lower = prompt.to_ascii_lowercase();
        let mut objects: Vec<&str> = Vec::new();
        for negation in ["do not ", "don't ", "dont ", "never ", "must not ", "should not "] {
            for (at, _) in lower.match_indices(negation).filter(|(at, _)| starts_word(&lower, *at)) {
                let rest = &prompt[at + negation.len()..];
                let rest_lower = &lower[at + negation.len()..];
                let Some(verb) = CHANGE_VERBS.iter().find(|verb| rest_lower.starts_with(*verb)) else {
                    continue;
                };
                objects.push(object(clause(&rest[verb.len()..])));
            }
        }
        for keep in ["leave ", "keep "] {
            for (at, _) in lower.match_indices(keep).filter(|(at, _)| starts_word(&lower, *at)) {
                let rest = clause(&prompt[at + keep.len()..]);
                let rest_lower = &lower[at + keep.len()..][..rest.len()];
                let end = UNCHANGED.iter().filter_map(|word| find_word(rest_lower, word)).min();
                if let Some(end) = end {
                    objects.push(&rest[..end]);
                }
            }
        }
        // `any file other than calc.py`, `what the tests check`: not the files named.
        objects.retain(|object| {
            let lower = object.to_ascii_lowercase();
            let first = lower.split_whitespace().next().unwrap_or("");
            !EXCEPTIONS.iter().any(|word| find_word(&lower, word).is_some()) && !NOT_OBJECTS.contains(&first)
        });
        let mut paths: Vec<String> = Vec::new();
        for object in objects {
            let words: Vec<String> =
                object.split_whitespace().map(|word| word.to_ascii_lowercase()).collect();
            let tests = words.iter().any(|word| {
                matches!(
                    word.trim_matches(|c: char| !c.is_alphanumeric()),
                    "test" | "tests" | "testcase" | "testcases"
                )
            });
            let own = file_names(object);
            let chosen = if own.is_empty() && tests {
                named.iter().filter(|name| is_test_file(name)).cloned().collect()
            } else {
                own
            };
            for path in chosen {
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
        }
        let others: Vec<&String> = named.iter().filter(|name| !paths.contains(name)).collect();
        let instead = match others.as_slice() {
            [only] if !paths.is_empty() => Some((*only).clone()),
            _ => None,
        };
        KeptFiles { paths, instead }
    }

    /// Whether `path` (a tool call's argument: relative, `./`-prefixed or absolute under
    /// `workspace`) is a kept file.
    pub(crate) fn holds(&self, path: &str, workspace: &std::path::Path) -> Option<&str> {
        let relative = std::path::Path::new(path)
            .strip_prefix(workspace)
            .map(|path| path.to_string_lossy().into_owned())
            .unwrap_or_else(|_| path.to_string());
        let relative = relative.trim_start_matches("./");
        self.paths
            .iter()
            .find(|kept| relative == kept.as_str() || relative.ends_with(&format!("/{kept}")))
            .map(String::as_str)
    }
}

/// Words that make the object an exception rather than the files kept (`any file other than
/// calc.py`).
const EXCEPTIONS: [&str; 5] = ["other than", "except", "besides", "apart from", "outside"];

/// First words of an object that is not a thing to keep (`don't change what the tests check`).
const NOT_OBJECTS: [&str; 8] = ["what", "how", "why", "whether", "when", "where", "which", "anything"];

/// The object of a change verb in `clause`: up to ` but `, or up to a `, ` or ` and ` that does not
/// go on listing files (`config.py, db.py and x.py` is one object; `the test, the bug is in calc.py`
/// is not).
fn object(clause: &str) -> &str {
    let lower = clause.to_ascii_lowercase();
    let mut end = lower.find(" but ").unwrap_or(clause.len());
    for separator in [", ", " and "] {
        for (at, _) in lower.match_indices(separator) {
            let next = clause[at + separator.len()..].split_whitespace().next().unwrap_or("");
            if file_names(next).is_empty() {
                end = end.min(at);
            }
        }
    }
    &clause[..end]
}

/// Whether `at` starts a word of `text` (nothing alphanumeric just before it).
fn starts_word(text: &str, at: usize) -> bool {
    !text[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '\'')
}

/// Where `word` first occurs in `text` as whole words.
fn find_word(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        starts_word(text, at) && !text[at + word.len()..].chars().next().is_some_and(char::is_alphanumeric)
    })
}

/// `text` up to the end of its clause: `;`, a line break, or a sentence's end (`.`, `!`, `?`
/// followed by a space or the end).
fn clause(text: &str) -> &str {
    let bytes = text.as_bytes();
    for (at, byte) in bytes.iter().enumerate() {
        let ends_sentence = matches!(byte, b'.' | b'!' | b'?')
            && bytes.get(at + 1).is_none_or(|next| next.is_ascii_whitespace());
        if *byte == b';' || *byte == b'\n' || ends_sentence {
            return &text[..at];
        }
    }
    text
}

/// The file names in `text`, in order, each once: words with an extension (`calc.py`,
/// `tests/test_a.py`), quotes, backticks and trailing punctuation removed.
fn file_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let marks = |c: char| "`'\"()[]{}<>,;:!?*".contains(c);
        let word = word
            .trim_start_matches(marks)
            .trim_end_matches(|c: char| marks(c) || c == '.')
            .trim_start_matches("./");
        let Some((stem, extension)) = word.rsplit_once('.') else { continue };
        let plain = |c: char| c.is_alphanumeric() || "_-./".contains(c);
        if !stem.is_empty()
            && !stem.ends_with('/')
            && (1..=5).contains(&extension.len())
            && extension.chars().all(|c| c.is_ascii_alphanumeric())
            && extension.chars().any(|c| c.is_ascii_alphabetic())
            && word.chars().all(plain)
            && !names.iter().any(|name| name == word)
        {
            names.push(word.to_string());
        }
    }
    names
}

/// Whether `path` names a test file (see the module docs).
fn is_test_file(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    let stem = base.split('.').next().unwrap_or(base);
    base.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || base.contains(".test.")
        || base.contains(".spec.")
        || path.starts_with("tests/")
        || path.contains("/tests/")
}

#[cfg(test)]
#[path = "kept_tests.rs"]
mod tests;
