//! The English vocabulary of [`super::claims`]: the phrases that claim success, the words that
//! negate, hedge or condition them, the verbs that name a file as changed, and the file
//! extensions a name must end in. Patterns are matched against lowercased text.

/// Phrases that say the tests pass.
pub(super) const TESTS: &[&str] = &[
    r"\btests?(?: suite)?(?: (?:now|all|still|are|is|were|have|has|had|do|did|again|both|also))* (?:pass(?:es|ed|ing)?|succeed(?:s|ed|ing)?|green)\b",
    r"\b\d+ (?:tests? )?passed\b",
    r"\beverything (?:now )?pass(?:es|ed)\b",
];

/// Phrases that say something is fixed, works or was verified.
pub(super) const WORKS: &[&str] = &[
    r"\bfixed\b",
    r"\b(?:now works|works now|it works|(?:works|working) (?:correctly|fine|properly|as expected|again|now)|(?:is|are) (?:now )?working)\b",
    r"\bverified\b",
    r"\bconfirmed\b",
    r"\b(?:bug|issue|problem|error|crash|failure|regression)s? (?:is |are |has been |have been )?(?:now )?(?:gone|resolved)\b",
];

/// Phrases that say the code builds.
pub(super) const BUILDS: &[&str] = &[
    r"\bbuild(?: now)? (?:succeeds|succeeded|passes|passed|works|is green|is clean)\b",
    r"\bbuilds (?:cleanly|successfully|fine|now|without (?:errors|warnings))\b",
    r"\bcompiles\b",
    r"\bcompiled (?:cleanly|successfully|fine|without (?:errors|warnings))\b",
];

/// Words after which `fixed` describes a thing rather than a repair (`a fixed size`).
pub(super) const FIXED_NOUNS: &[&str] = &[
    "size", "width", "height", "length", "number", "point", "rate", "price", "amount", "string", "value",
    "values", "seed", "format", "header", "position", "cost", "costs", "term", "set", "list", "order",
    "offset", "delay", "timeout", "interval", "version", "window", "array", "buffer", "layout", "count",
];

/// Words that negate a phrase after them (besides every word ending in `n't`).
pub(super) const NEGATIONS: &[&str] =
    &["not", "no", "never", "cannot", "unable", "without", "nor", "neither", "nothing", "none"];

/// Words that make a claim in their clause a hope rather than a report.
pub(super) const HEDGES: &[&str] = &[
    "should",
    "would",
    "might",
    "may",
    "could",
    "will",
    "hopefully",
    "probably",
    "likely",
    "maybe",
    "perhaps",
    "expect",
    "expected",
    "ensure",
    "please",
    "need",
    "needs",
    "how",
    "try",
    "can",
];

/// Word pairs that do the same.
pub(super) const HEDGE_PAIRS: &[&str] =
    &["make sure", "to be", "to confirm", "to verify", "to check", "to see"];

/// Words that put the rest of the sentence under a condition.
pub(super) const CONDITIONS: &[&str] = &["if", "once", "unless", "whether", "until"];

/// Where a clause starts: after these characters or words.
pub(super) const CLAUSE_MARKS: &[&str] = &[
    ",",
    ";",
    ":",
    "(",
    ")",
    " - ",
    " — ",
    " and ",
    " but ",
    " so ",
    " then ",
    " although ",
    " though ",
    " while ",
];

/// Verbs that name a file as changed.
pub(super) const CHANGE_VERBS: &[&str] = &[
    "changed",
    "updated",
    "fixed",
    "edited",
    "modified",
    "rewrote",
    "rewritten",
    "patched",
    "refactored",
    "created",
    "adjusted",
    "tweaked",
    "amended",
];

/// Words that end the object of a change verb (`updated app.py to call helper.py`).
pub(super) const OBJECT_ENDS: &[&str] = &[
    "to", "so", "because", "which", "that", "since", "while", "but", "when", "where", "by", "using", "with",
    "from", "for", "as", "after", "before", "then", "if", "via", "until", "unless", "although", "though",
    "once",
];

/// Verbs that start another clause: a file name right before one is that clause's subject
/// (`fixed the bug and test_app.py now passes`).
pub(super) const CLAUSE_VERBS: &[&str] = &[
    "pass", "passes", "passed", "fail", "fails", "failed", "now", "still", "is", "are", "was", "were",
    "works", "runs", "ran", "run", "should", "will", "has", "have", "had", "can", "does", "do", "did",
    "imports", "calls", "uses", "contains",
];

/// Words between a file name and its change verb in the passive (`app.py has now been updated`).
pub(super) const AUXILIARIES: &[&str] = &[
    "was",
    "were",
    "is",
    "are",
    "been",
    "be",
    "has",
    "have",
    "got",
    "now",
    "also",
    "successfully",
    "just",
    "already",
];

/// Extensions of the file names looked for.
pub(super) const EXTENSIONS: &[&str] = &[
    "py", "pyi", "rs", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "rb", "java", "kt", "kts", "c", "h",
    "cc", "cpp", "hpp", "cxx", "cs", "swift", "php", "scala", "lua", "pl", "sh", "bash", "zsh", "ex", "exs",
    "erl", "hs", "ml", "dart", "zig", "nim", "r", "sql", "html", "htm", "css", "scss", "sass", "less", "vue",
    "svelte", "md", "rst", "txt", "toml", "yaml", "yml", "json", "jsonc", "ini", "cfg", "conf", "env", "xml",
    "gradle", "lock", "proto", "tf", "ipynb", "csv", "mk", "cmake",
];
