//! Which project MCP servers the user approved, per project directory.
//!
//! A project's `.mcp.json` comes with the repository (and the model may write it), so its servers
//! run only after the user approved them by name for that project — `lathe mcp approve` or the
//! terminal UI — or when `trust_project_mcp = true`. Approvals live in
//! `<lathe home>/mcp-approvals.json`: `{"projects": {"/abs/project": ["server", …]}}`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Serialize, Deserialize)]
struct Approvals {
    #[serde(default)]
    projects: BTreeMap<String, Vec<String>>,
}

/// The approvals file under Lathe's home.
pub fn approvals_file(home: &Path) -> PathBuf {
    home.join("mcp-approvals.json")
}

/// Names of the project servers approved for `project`; none when the file is missing or invalid.
pub fn approved(home: &Path, project: &Path) -> Vec<String> {
    read(home).projects.remove(&key(project)).unwrap_or_default()
}

/// Records `names` as approved for `project` (kept sorted, without duplicates).
pub fn approve(home: &Path, project: &Path, names: &[String]) -> std::io::Result<()> {
    let mut approvals = read(home);
    let list = approvals.projects.entry(key(project)).or_default();
    list.extend(names.iter().cloned());
    list.sort();
    list.dedup();
    std::fs::create_dir_all(home)?;
    let text = serde_json::to_string_pretty(&approvals).map_err(std::io::Error::other)?;
    std::fs::write(approvals_file(home), text + "\n")
}

fn read(home: &Path) -> Approvals {
    std::fs::read_to_string(approvals_file(home))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn key(project: &Path) -> String {
    project.display().to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn approvals_are_per_project_and_accumulate() {
        let home = tempfile::tempdir().unwrap();
        let a = Path::new("/src/a");
        assert!(approved(home.path(), a).is_empty());
        approve(home.path(), a, &["fs".into()]).unwrap();
        approve(home.path(), a, &["db".into(), "fs".into()]).unwrap();
        assert_eq!(approved(home.path(), a), vec!["db".to_string(), "fs".to_string()]);
        assert!(approved(home.path(), Path::new("/src/b")).is_empty());
    }
}
