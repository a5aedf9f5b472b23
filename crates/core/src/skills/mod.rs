//! Skills (FEATURES.md §H, the Agent Skills format): a folder holding `SKILL.md`, whose YAML
//! frontmatter has `name` and `description` (and optionally `allowed-tools`), with any other files
//! the instructions refer to.
//!
//! Flow: at session start [`SkillSet::discover`] reads only the frontmatter of every
//! `<dir>/<folder>/SKILL.md` in the search folders ([`crate::definitions::search_dirs`]): bad files
//! (no frontmatter, invalid YAML, no name or description, over the size limit) and duplicate names
//! are reported as warnings and skipped, the rest load. The model sees only names and descriptions,
//! within [`LISTING_BUDGET_BYTES`], in the description of the `skill` tool ([`tool::SkillTool`]);
//! calling it reads the body and lists the skill's other files. `/<skill-name> args` typed by the
//! user expands the same body ([`crate::commands`]). A skill's `allowed-tools` restrict: for the
//! turn of `/<skill-name>`, and, once the model has loaded it, until the turn ends ([`gate`]).

pub mod gate;
pub mod tool;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::definitions::{Scope, search_dirs, valid_name};
use crate::frontmatter::{FrontmatterError, NameList, read_body, read_head};

/// Bytes the skill listing in the `skill` tool's description may take; past it descriptions are
/// left out and then names, with a count of what was left out.
pub const LISTING_BUDGET_BYTES: usize = 6 * 1024;

/// Longest description listed, in characters (the Agent Skills limit).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The frontmatter fields Lathe reads (others are ignored).
#[derive(Debug, Deserialize)]
struct SkillMeta {
    name: Option<String>,
    description: Option<String>,
    #[serde(default, rename = "allowed-tools")]
    allowed_tools: NameList,
}

/// One discovered skill; its body stays on disk until used.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The name the model and the user call it by.
    pub name: String,
    /// What it is for and when to use it.
    pub description: String,
    /// `allowed-tools` from the frontmatter, as written.
    pub allowed_tools: Vec<String>,
    /// The skill's folder (its other files are relative to it).
    pub dir: PathBuf,
    /// Its `SKILL.md`.
    pub file: PathBuf,
    /// Project or user.
    pub scope: Scope,
    body_offset: u64,
}

impl Skill {
    /// Reads the instructions (the Markdown after the frontmatter).
    pub fn body(&self) -> Result<String, FrontmatterError> {
        read_body(&self.file, self.body_offset)
    }

    /// The skill's files other than `SKILL.md`, relative to its folder, sorted, at most `limit`
    /// (sub-folders are walked three levels deep; symlinked folders are not followed).
    pub fn other_files(&self, limit: usize) -> Vec<String> {
        let mut files = Vec::new();
        let mut pending = vec![(self.dir.clone(), 0usize)];
        while let Some((dir, depth)) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.filter_map(Result::ok) {
                let Ok(kind) = entry.file_type() else { continue };
                let path = entry.path();
                if kind.is_dir() && depth < 3 {
                    pending.push((path, depth + 1));
                } else if !kind.is_dir()
                    && path != self.file
                    && let Ok(relative) = path.strip_prefix(&self.dir)
                {
                    files.push(relative.display().to_string());
                }
            }
        }
        files.sort();
        files.truncate(limit);
        files
    }
}

/// The skills of a session, sorted by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillSet {
    skills: Vec<Skill>,
}

impl SkillSet {
    /// Finds the skills for `workspace` with Lathe's home at `lathe_home`; returns them and a
    /// warning for every file skipped or shadowed.
    pub fn discover(workspace: &Path, lathe_home: &Path) -> (SkillSet, Vec<String>) {
        let mut skills: Vec<Skill> = Vec::new();
        let mut warnings = Vec::new();
        for (dir, scope) in search_dirs(workspace, lathe_home, "skills") {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut folders: Vec<PathBuf> =
                entries.filter_map(Result::ok).map(|entry| entry.path()).collect();
            folders.sort();
            for folder in folders {
                let file = folder.join("SKILL.md");
                if !file.is_file() {
                    continue;
                }
                match load(&folder, &file, scope) {
                    Ok(skill) => match skills.iter().find(|known| known.name == skill.name) {
                        Some(known) => warnings.push(format!(
                            "skill `{}` in {} is skipped: the {} skill {} has the same name",
                            skill.name,
                            file.display(),
                            known.scope.as_str(),
                            known.file.display()
                        )),
                        None => skills.push(skill),
                    },
                    Err(message) => warnings.push(format!("skill skipped: {message}")),
                }
            }
        }
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        (SkillSet { skills }, warnings)
    }

    /// A set of the given skills (sorted by name).
    #[cfg(test)]
    pub fn from_skills(mut skills: Vec<Skill>) -> SkillSet {
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        SkillSet { skills }
    }

    /// All skills, by name.
    pub fn all(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The listing offered to the model: one `- name: description` line per skill within `budget`
    /// bytes; when they do not fit, the remaining skills are listed by name only, and past the
    /// budget a last line counts the ones left out. Returns the text and how many were left out.
    pub fn listing(&self, budget: usize) -> (String, usize) {
        let mut text = String::new();
        let mut left_out = 0;
        for (index, skill) in self.skills.iter().enumerate() {
            let full = format!("- {}: {}\n", skill.name, one_line(&skill.description));
            let short = format!("- {}\n", skill.name);
            // Reserve room for the closing count line.
            let reserve = if index + 1 < self.skills.len() { 64 } else { 0 };
            if text.len() + full.len() + reserve <= budget {
                text.push_str(&full);
            } else if text.len() + short.len() + reserve <= budget {
                text.push_str(&short);
            } else {
                left_out = self.skills.len() - index;
                text.push_str(&format!("- … {left_out} more skills not listed\n"));
                break;
            }
        }
        (text, left_out)
    }
}

fn load(folder: &Path, file: &Path, scope: Scope) -> Result<Skill, String> {
    let head = read_head::<SkillMeta>(file).map_err(|error| error.to_string())?;
    let Some(meta) = head.meta else {
        return Err(FrontmatterError::Missing { path: file.to_path_buf() }.to_string());
    };
    let name = meta.name.map(|name| name.trim().to_string()).unwrap_or_default();
    if name.is_empty() {
        return Err(format!("{}: the frontmatter has no `name`", file.display()));
    }
    if !valid_name(&name) {
        return Err(format!(
            "{}: the name `{name}` must be 1-64 characters without spaces or slashes",
            file.display()
        ));
    }
    let description = meta.description.map(|text| text.trim().to_string()).unwrap_or_default();
    if description.is_empty() {
        return Err(format!("{}: the frontmatter has no `description`", file.display()));
    }
    Ok(Skill {
        name,
        description: description.chars().take(MAX_DESCRIPTION_CHARS).collect(),
        allowed_tools: meta.allowed_tools.names().unwrap_or_default(),
        dir: folder.to_path_buf(),
        file: file.to_path_buf(),
        scope,
        body_offset: head.body_offset,
    })
}

/// `text` on one line (newlines folded into spaces).
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
