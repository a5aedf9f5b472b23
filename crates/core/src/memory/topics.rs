//! Topics of everyday development work, for recall: a prompt's word also matches, at
//! [`WEIGHT`], the other words of its topic ("dependencies" finds "we use pnpm, not npm"). A
//! fixed table, so recall stays deterministic and explainable (a matched term shows as
//! `dependencies~npm`).

use super::terms::stem;

/// The weight of a topic match relative to the word itself.
pub const WEIGHT: f64 = 0.5;

const TOPICS: &[&[&str]] = &[
    &[
        "dependency",
        "package",
        "install",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "pip",
        "poetry",
        "uv",
        "cargo",
        "lockfile",
        "requirements",
        "library",
        "module",
    ],
    &["test", "pytest", "jest", "vitest", "unittest", "spec", "coverage", "fixture"],
    &[
        "format",
        "formatter",
        "prettier",
        "rustfmt",
        "black",
        "lint",
        "linter",
        "eslint",
        "clippy",
        "ruff",
        "style",
    ],
    &["commit", "branch", "push", "merge", "rebase", "git", "pull", "review"],
    &["build", "compile", "make", "bundle", "webpack", "vite"],
    &["deploy", "release", "publish", "ci", "pipeline", "staging", "production"],
    &["doc", "documentation", "readme", "docstring", "changelog"],
    &["database", "db", "migration", "schema", "sql", "postgres", "sqlite"],
    &["log", "logging", "tracing", "debug"],
];

/// The other words of the topics the stem `term` belongs to (none when it belongs to none).
pub fn related(term: &str) -> Vec<&'static str> {
    TOPICS
        .iter()
        .filter(|topic| topic.iter().any(|word| stem(word) == term))
        .flat_map(|topic| topic.iter().copied().filter(|word| stem(word) != term))
        .collect()
}
