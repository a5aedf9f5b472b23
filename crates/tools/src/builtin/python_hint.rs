//! A hint for the small tool set's `shell` ([`super::shell_jobs::ForegroundShell`]): Python's
//! `NameError` for a standard-library module the file does not import. Python 3.12 adds
//! "Did you forget to import 'x'?" itself (`sys.stdlib_module_names`); older versions do not, and
//! a small model that reads only the error edits the line that uses the module instead of adding
//! the import. The hint names the file, the module and the edit that adds it above the file's
//! first line.

use std::path::Path;

/// Standard-library modules a short script commonly uses without importing (a subset of
/// `sys.stdlib_module_names`, Python 3.12).
const STDLIB: [&str; 52] = [
    "argparse",
    "array",
    "base64",
    "bisect",
    "calendar",
    "collections",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "enum",
    "fnmatch",
    "fractions",
    "functools",
    "glob",
    "gzip",
    "hashlib",
    "heapq",
    "html",
    "inspect",
    "io",
    "itertools",
    "json",
    "logging",
    "math",
    "operator",
    "os",
    "pathlib",
    "pickle",
    "platform",
    "pprint",
    "random",
    "re",
    "secrets",
    "shlex",
    "shutil",
    "signal",
    "socket",
    "sqlite3",
    "statistics",
    "string",
    "struct",
    "subprocess",
    "sys",
    "tempfile",
    "textwrap",
    "time",
    "typing",
    "uuid",
];

/// The hint for a shell `output` (stdout and stderr) run in `workspace`, or `None` when it has no
/// `NameError` of a standard-library module in a workspace file that lacks its import.
pub fn name_error_hint(output: &str, workspace: &Path) -> Option<String> {
    let line = output.lines().rev().find(|line| line.starts_with("NameError: name '"))?;
    if line.contains("Did you ") {
        return None;
    }
    let module = line.strip_prefix("NameError: name '")?.split('\'').next()?;
    if !STDLIB.contains(&module) {
        return None;
    }
    // The innermost frame: the last `File "…", line N` before the error.
    let frame = output.lines().rev().find_map(|line| line.trim_start().strip_prefix("File \""))?;
    let path = Path::new(frame.split('"').next()?);
    let relative = if path.is_absolute() { path.strip_prefix(workspace).ok()? } else { path };
    let text = std::fs::read_to_string(workspace.join(relative)).ok()?;
    let imported = format!("import {module}");
    if text.lines().any(|line| line.trim_start().starts_with(&imported)) {
        return None;
    }
    let first = text.lines().find(|line| !line.trim().is_empty())?;
    if first.starts_with("from __future__") || first.starts_with("#!") {
        return None;
    }
    let file = relative.to_str()?;
    let call = serde_json::json!({
        "path": file,
        "old_string": first,
        "new_string": format!("{imported}\n{first}"),
    });
    Some(format!(
        "\nHint: {module} is a standard-library module that {file} does not import. Add `{imported}` above \
         its first line: edit_file {call}"
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const TRACE: &str = "Traceback (most recent call last):\n  File \"WS/tool.py\", line 9, in <module>\n    \
        print(value())\n  File \"WS/tool.py\", line 6, in value\n    return textwrap.dedent(\"  x\")\n\
        NameError: name 'textwrap' is not defined\nexit code: 1";

    #[test]
    fn a_missing_standard_import_gets_the_edit_that_adds_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tool.py"), "\ndef label():\n    return 1\n").unwrap();
        let output = TRACE.replace("WS", dir.path().to_str().unwrap());
        let hint = name_error_hint(&output, dir.path()).unwrap();
        assert!(
            hint.contains("textwrap is a standard-library module that tool.py does not import"),
            "{hint}"
        );
        assert!(
            hint.contains(r#"{"path":"tool.py","old_string":"def label():","new_string":"import textwrap\ndef label():"}"#),
            "{hint}"
        );
        // A relative path (as Lathe shows the model) works the same.
        assert_eq!(name_error_hint(&TRACE.replace("WS/", ""), dir.path()), Some(hint));
    }

    #[test]
    fn no_hint_for_other_names_imported_modules_or_files_outside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tool.py"), "import textwrap\n").unwrap();
        let inside = TRACE.replace("WS", dir.path().to_str().unwrap());
        assert_eq!(name_error_hint(&inside, dir.path()), None);
        std::fs::write(dir.path().join("tool.py"), "x = 1\n").unwrap();
        assert_eq!(name_error_hint(&inside.replace("'textwrap'", "'helper'"), dir.path()), None);
        assert_eq!(name_error_hint(&TRACE.replace("WS", "/elsewhere"), dir.path()), None);
        let newer = inside.replace("is not defined", "is not defined. Did you forget to import 'textwrap'?");
        assert_eq!(name_error_hint(&newer, dir.path()), None);
    }
}
