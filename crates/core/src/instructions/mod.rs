//! Project and user instructions (FEATURES.md §F): the files users already write for coding
//! agents, gathered once per session into the system prompt.
//!
//! Order (outermost first, so the instructions closest to the working directory come last and win):
//! 1. the user's own: `~/.lathe/AGENTS.override.md` or else `~/.lathe/AGENTS.md` (Lathe's home), then
//!    `~/.claude/CLAUDE.md`;
//! 2. each directory from the repository root (the nearest ancestor with `.git`, or the working
//!    directory) down to the working directory: `AGENTS.override.md` or else `AGENTS.md`,
//!    `CLAUDE.md`, `.claude/CLAUDE.md`, `AGENTS.local.md`, `CLAUDE.local.md`;
//! 3. rules without `paths:` from `.claude/rules/**/*.md` in the repository root and in
//!    `~/.claude/rules/` ([`rules`]; rules with `paths:` load later, on the first matching read).
//!
//! Each file is followed by the files it imports with `@path` ([`imports`]), depth ≤ 5; an import
//! cycle, a deeper import or a missing file is a warning. A file that is huge, binary, unreadable or
//! a symlink loop is skipped with a warning; an empty one silently. Beyond the total cap the text is
//! cut, and a warning names what was cut.

pub mod imports;
pub mod rules;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

pub use rules::{Rule, RuleSet};

/// Default cap on the instructions' total size, in bytes (`instructions_max_bytes`).
pub const DEFAULT_MAX_BYTES: usize = 40 * 1024;

/// Largest single instruction file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Deepest `@path` import followed (a file the user wrote is depth 0).
pub const MAX_IMPORT_DEPTH: usize = 5;

/// Where instructions come from.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The working directory.
    pub cwd: PathBuf,
    /// Lathe's home (`~/.lathe`).
    pub lathe_home: PathBuf,
    /// The user's home directory (for `~/.claude/…` and `@~/…`), when known.
    pub user_home: Option<PathBuf>,
    /// The total cap in bytes.
    pub max_bytes: usize,
}

/// The gathered instructions.
#[derive(Debug, Clone, Default)]
pub struct Instructions {
    /// The text for the system prompt (empty when there are none).
    pub text: String,
    /// Path-scoped rules, loaded on the first matching read.
    pub rules: RuleSet,
    /// What the user should know: skipped files, broken imports, what the cap cut.
    pub warnings: Vec<String>,
}

/// One file's part of the text.
struct Section {
    label: String,
    text: String,
}

/// The nearest ancestor of `cwd` (itself included) that holds `.git`.
pub fn repo_root(cwd: &Path) -> Option<&Path> {
    cwd.ancestors().find(|dir| dir.join(".git").exists())
}

/// The instruction files that apply to `sources.cwd`, in order (see the module docs), before
/// imports.
pub fn files(sources: &Sources) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let first = |candidates: &[PathBuf]| candidates.iter().find(|path| path.is_file()).cloned();
    files.extend(first(&[
        sources.lathe_home.join("AGENTS.override.md"),
        sources.lathe_home.join("AGENTS.md"),
    ]));
    if let Some(home) = &sources.user_home {
        files.extend(first(&[home.join(".claude").join("CLAUDE.md")]));
    }
    let root = repo_root(&sources.cwd).unwrap_or(&sources.cwd);
    let mut chain: Vec<&Path> = sources.cwd.ancestors().take_while(|dir| dir.starts_with(root)).collect();
    chain.reverse();
    for dir in chain {
        files.extend(first(&[dir.join("AGENTS.override.md"), dir.join("AGENTS.md")]));
        for name in ["CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.local.md", "CLAUDE.local.md"] {
            files.extend(first(&[dir.join(name)]));
        }
    }
    files
}

/// Gathers the instructions for `sources`.
pub fn gather(sources: &Sources) -> Instructions {
    let mut warnings = Vec::new();
    let mut sections = Vec::new();
    let mut seen = HashSet::new();
    for file in files(sources) {
        include(&file, None, 0, &mut Vec::new(), &mut seen, sources, &mut sections, &mut warnings);
    }
    let root = repo_root(&sources.cwd).unwrap_or(&sources.cwd).to_path_buf();
    let mut rule_dirs = vec![(root.join(".claude").join("rules"), root.clone())];
    if let Some(home) = &sources.user_home {
        rule_dirs.push((home.join(".claude").join("rules"), root.clone()));
    }
    let mut rules = RuleSet::default();
    for (dir, base) in rule_dirs {
        for path in markdown_files(&dir) {
            let text = match load(&path) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(reason) => {
                    warnings.push(format!("instructions: skipped {}: {reason}", path.display()));
                    continue;
                }
            };
            match rules::frontmatter(&text) {
                (Some(globs), body) if !globs.is_empty() => {
                    match Rule::new(path.clone(), base.clone(), globs, body.to_string()) {
                        Ok(rule) => rules.rules.push(rule),
                        Err(error) => {
                            warnings.push(format!("instructions: skipped rule {}: {error}", path.display()))
                        }
                    }
                }
                (_, body) => sections
                    .push(Section { label: format!("{} (rule)", path.display()), text: body.to_string() }),
            }
        }
    }
    let text = render(sections, sources.max_bytes, &mut warnings);
    Instructions { text, rules, warnings }
}

/// Adds `path` and, after it, what it imports.
#[allow(clippy::too_many_arguments)]
fn include(
    path: &Path,
    importer: Option<&Path>,
    depth: usize,
    chain: &mut Vec<PathBuf>,
    seen: &mut HashSet<PathBuf>,
    sources: &Sources,
    sections: &mut Vec<Section>,
    warnings: &mut Vec<String>,
) {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if chain.contains(&canonical) {
        let cycle: Vec<String> =
            chain.iter().chain(std::iter::once(&canonical)).map(|p| p.display().to_string()).collect();
        warnings.push(format!(
            "instructions: import cycle {}; the repeated import is skipped",
            cycle.join(" → ")
        ));
        return;
    }
    if !seen.insert(canonical.clone()) {
        return;
    }
    let text = match load(path) {
        Ok(Some(text)) => text,
        Ok(None) => return,
        Err(reason) => {
            let by = importer.map(|from| format!(" (imported by {})", from.display())).unwrap_or_default();
            warnings.push(format!("instructions: skipped {}{by}: {reason}", path.display()));
            return;
        }
    };
    let label = match importer {
        Some(from) => format!("{} (imported by {})", path.display(), from.display()),
        None => path.display().to_string(),
    };
    let found = imports::find_imports(&text);
    sections.push(Section { label, text });
    chain.push(canonical);
    for import in found {
        let target = imports::resolve(&import, path, sources.user_home.as_deref());
        if depth + 1 > MAX_IMPORT_DEPTH {
            warnings.push(format!(
                "instructions: {} imports @{import}, deeper than {MAX_IMPORT_DEPTH} levels of imports; not followed",
                path.display()
            ));
            continue;
        }
        if !target.exists() && std::fs::symlink_metadata(&target).is_err() {
            warnings.push(format!(
                "instructions: {} imports @{import}, but {} does not exist",
                path.display(),
                target.display()
            ));
            continue;
        }
        include(&target, Some(path), depth + 1, chain, seen, sources, sections, warnings);
    }
    chain.pop();
}

/// The text of an instruction file; `Ok(None)` when it is empty or not a file; `Err` says why it
/// cannot be used (a symlink loop, too big, unreadable, binary).
pub fn load(path: &Path) -> Result<Option<String>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.raw_os_error() == Some(libc_eloop()) => return Err("a symlink loop".into()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err("it does not exist (a dangling symlink?)".into());
        }
        Err(error) => return Err(format!("cannot read it: {error}")),
    };
    if !meta.is_file() {
        return Ok(None);
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "it is {} bytes, more than the {MAX_FILE_BYTES}-byte limit for one file",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|error| format!("cannot read it: {error}"))?;
    if bytes.contains(&0) {
        return Err("it is binary, not text".into());
    }
    let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())?;
    Ok((!text.trim().is_empty()).then_some(text))
}

/// `ELOOP` on Linux and the BSDs' value elsewhere.
fn libc_eloop() -> i32 {
    if cfg!(target_os = "linux") { 40 } else { 62 }
}

/// `*.md` files under `dir` (recursively, symlinked directories not followed), sorted.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), 0)];
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && depth < 8 => pending.push((path, depth + 1)),
                Ok(kind) if !kind.is_dir() && path.extension().is_some_and(|ext| ext == "md") => {
                    found.push(path)
                }
                _ => {}
            }
        }
    }
    found.sort();
    found
}

/// Joins the sections, cutting at `max_bytes` with a warning naming what was cut.
fn render(sections: Vec<Section>, max_bytes: usize, warnings: &mut Vec<String>) -> String {
    let mut text = String::new();
    let mut cut = Vec::new();
    for section in sections {
        let part = format!("\n## From {}\n{}\n", section.label, section.text.trim_end());
        if !cut.is_empty() {
            cut.push(format!("{} (left out)", section.label));
            continue;
        }
        if text.len() + part.len() <= max_bytes {
            text.push_str(&part);
            continue;
        }
        let mut room = max_bytes.saturating_sub(text.len());
        while !part.is_char_boundary(room) {
            room -= 1;
        }
        text.push_str(&part[..room]);
        text.push_str("\n[instructions cut here at the size limit]\n");
        cut.push(format!("{} (cut after {} of {} bytes)", section.label, room, part.len()));
    }
    if !cut.is_empty() {
        warnings.push(format!(
            "instructions exceed {} bytes (instructions_max_bytes) and were cut: {}; shorten them or raise the limit",
            max_bytes,
            cut.join(", ")
        ));
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "instructions_tests.rs"]
mod tests;
