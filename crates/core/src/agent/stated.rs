//! The check Lathe derives from what a prompt states about Python code, for verify-before-claiming
//! when the prompt names no command to run: a stated call and its expected result
//! (`sum_x(6) returns 75 but should return 105`, `f(4, 9) should include 9`), a function or class
//! to add (`Add a function product_of(a, b) to utils.py`), a rename (`Rename the function calc_x
//! to get_x in lib.py, and update main.py`).
//!
//! The check is one `python3 -B -c '…'` line the model runs itself: it imports the module the
//! prompt names that defines the name and asserts what the prompt says; a failure shows what the
//! code returned (or Python's own error). The code holds no quotes where it can do without (a small
//! model writes the command as a JSON string and drops escaped quotes): a name it needs as a string
//! comes in as an argument (`sys.argv`). A compile check of a changed file cannot tell a fixed
//! function from one still wrong, or an added function from a changed constant; this one can. Only
//! literal arguments and values are used (numbers, strings, lists, `True`/`False`/`None`); a
//! statement Lathe cannot turn into an assertion is left out, and with none left there is no
//! stated check.
//!
//! [`adding_hint`] and [`renaming_hint`] tell the model where a function to add goes and which
//! lines still use a renamed name, with the `edit_file` call to make.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

/// `NAME(ARGS) … should return|include|be|equal VALUE` within one sentence.
static EXPECTED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"\b(?P<name>[A-Za-z_]\w*)\((?P<args>[^()]*)\)(?:[^.;:?!]|\.\w)*?\bshould (?:also )?(?P<verb>return|include|contain|be|equal|give)\s+(?P<value>-?\d+(?:\.\d+)?|'[^']*'|"[^"]*"|\[[^\]]*\]|True|False|None)"#,
    )
    .ok()
});

/// `add a (new) function|class NAME(PARAMS)?`.
static ADDED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\badd (?:a |an |the )?(?:new )?(?P<kind>function|class) (?:called |named )?`?(?P<name>[A-Za-z_]\w*)`?(?:\((?P<params>[\w\s,=*]*)\))?")
        .ok()
});

/// Words that follow "add a function" where the prompt gives no name.
const NOT_NAMES: [&str; 16] = [
    "to",
    "that",
    "which",
    "in",
    "for",
    "with",
    "and",
    "the",
    "of",
    "on",
    "into",
    "so",
    "as",
    "returning",
    "here",
    "there",
];

/// `rename (the function|class|…) OLD to NEW`.
static RENAMED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\brename (?:the )?(?:function |class |method |variable |constant )?`?(?P<old>[A-Za-z_]\w*)`?(?:\(\))? to `?(?P<new>[A-Za-z_]\w*)`?",
    )
    .ok()
});

/// The Python files a prompt names (`lib.py`, `src/app.py`), in order.
static PY_FILE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"[\w./-]*\w\.py\b").ok());

/// A literal Lathe puts in a check: numbers, strings, lists and tuples of them, `True`, `False`,
/// `None`, separated by commas.
static LITERALS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"^(?:\s|,|\[|\]|\(|\)|-?\d+(?:\.\d+)?|'[^'\\]*'|"[^"\\]*"|True|False|None)*$"#).ok()
});

/// The compiled patterns: `None` only if a pattern's source were invalid (the tests use each).
fn expected() -> Option<&'static Regex> {
    EXPECTED.as_ref()
}

fn added() -> Option<&'static Regex> {
    ADDED.as_ref()
}

fn renamed() -> Option<&'static Regex> {
    RENAMED.as_ref()
}

fn py_file() -> Option<&'static Regex> {
    PY_FILE.as_ref()
}

fn literals() -> Option<&'static Regex> {
    LITERALS.as_ref()
}

/// The stated check of `prompt` in `workspace`: `python3 -B -c '<assertions>'` (`-B`: no
/// `__pycache__` left in the workspace) and, for a rename, the old name as an argument; `None`
/// when the prompt states nothing Lathe can assert. Files are read from `workspace` (the module of
/// a stated name is the first Python file the prompt names that defines it; for an added name,
/// the first one it names).
pub(crate) fn stated_check(prompt: &str, workspace: &Path) -> Option<String> {
    let files: Vec<String> = py_file()?.find_iter(prompt).map(|m| m.as_str().to_string()).collect();
    if files.is_empty() {
        return None;
    }
    let read = |file: &str| std::fs::read_to_string(workspace.join(file)).unwrap_or_default();
    let defining = |name: &str| {
        files.iter().find(|file| {
            let text = read(file);
            text.contains(&format!("def {name}(")) || text.contains(&format!("class {name}"))
        })
    };
    let mut code = Code::default();
    for found in expected()?.captures_iter(prompt) {
        let (name, args, value) = (&found["name"], &found["args"], &found["value"]);
        if !literals()?.is_match(args) || !literals()?.is_match(value) {
            continue;
        }
        let Some(file) = defining(name) else { continue };
        let module = code.import(file);
        let (args, value) = (python_quotes(args), python_quotes(value));
        let test = match &found["verb"] {
            "include" | "contain" => format!("{value} in r"),
            _ => format!("r == {value}"),
        };
        // What the call returned is the assertion's message.
        code.push(format!("r = {module}.{name}({args}); assert {test}, r"));
    }
    for found in added()?.captures_iter(prompt) {
        let name = &found["name"];
        // "Add a function to utils.py that …" names no function.
        if NOT_NAMES.iter().any(|word| word.eq_ignore_ascii_case(name)) {
            continue;
        }
        let Some(file) = defining(name).or(files.first()) else { continue };
        let module = code.import(file);
        // A missing name fails with Python's own "has no attribute" error.
        code.push(format!("{module}.{name}"));
        let params = found.name("params").map(|p| p.as_str().trim()).unwrap_or_default();
        if found["kind"].eq_ignore_ascii_case("function")
            && !params.is_empty()
            && !params.contains(['=', '*'])
        {
            let count = params.split(',').filter(|p| !p.trim().is_empty()).count();
            code.inspect = true;
            code.push(format!(
                "s = inspect.signature({module}.{name}); assert len(s.parameters) == {count}, s"
            ));
        }
    }
    for found in renamed()?.captures_iter(prompt) {
        let (old, new) = (&found["old"], &found["new"]);
        let Some(file) = defining(new).or_else(|| defining(old)) else { continue };
        let module = code.import(file);
        code.push(format!("{module}.{new}"));
        // The old name comes in as an argument (the check has no quotes for the model to escape).
        code.push(format!("assert not hasattr({module}, sys.argv[1]), sys.argv[1:]"));
        code.args = format!(" {old} still defined in {file}");
        // The other files the prompt names use the renamed name: importing one that still
        // imports the old name fails.
        for other in files.iter().filter(|other| *other != file) {
            code.import(other);
        }
    }
    code.finish()
}

/// What to tell the model while a function or class the prompt says to add is not in the file the
/// prompt names (no `def NAME(` or `class NAME` there yet): where and how to add it (after the
/// file's last line, at column 0). `None` otherwise.
pub(crate) fn adding_hint(prompt: &str, workspace: &Path) -> Option<String> {
    let files: Vec<&str> = py_file()?.find_iter(prompt).map(|m| m.as_str()).collect();
    let file = files.first()?;
    let text = std::fs::read_to_string(workspace.join(file)).ok()?;
    let found = added()?.captures_iter(prompt).find(|found| {
        let name = &found["name"];
        !NOT_NAMES.iter().any(|word| word.eq_ignore_ascii_case(name))
            && !text.contains(&format!("def {name}("))
            && !text.contains(&format!("class {name}"))
    })?;
    let last = text.lines().rev().find(|line| !line.trim().is_empty())?;
    let keyword = if found["kind"].eq_ignore_ascii_case("class") { "class" } else { "def" };
    let params = found.name("params").map_or(String::new(), |p| format!("({})", p.as_str().trim()));
    Some(format!(
        "\n{name} is not in {file} yet. Add it after the file's last line: edit_file with old_string {last} \
         and new_string that same line, two empty lines, then `{keyword} {name}{params}:` at column 0 and its \
         body indented by 4 spaces: the whole {kind} in one edit, not only its first line.",
        kind = if keyword == "def" { "function" } else { "class" },
        name = &found["name"],
        last = serde_json::Value::String(last.to_string()),
    ))
}

/// What to tell the model when the check of a rename the prompt asks for failed: each line of the
/// Python files the prompt names that still uses the old name, with the `edit_file` call that
/// changes it (at most [`HINTED_LINES`]). `None` when no line does.
pub(crate) fn renaming_hint(prompt: &str, workspace: &Path) -> Option<String> {
    let mut edits = Vec::new();
    for found in renamed()?.captures_iter(prompt) {
        let (old, new) = (&found["old"], &found["new"]);
        let word = Regex::new(&format!(r"\b{}\b", regex::escape(old))).ok()?;
        for file in py_file()?.find_iter(prompt).map(|m| m.as_str()) {
            let text = std::fs::read_to_string(workspace.join(file)).unwrap_or_default();
            for line in text.lines().filter(|line| word.is_match(line)) {
                let call = serde_json::json!({
                    "path": file,
                    "old_string": line,
                    "new_string": word.replace_all(line, new),
                });
                edits.push(format!("edit_file {call}"));
            }
        }
    }
    edits.truncate(HINTED_LINES);
    (!edits.is_empty())
        .then(|| format!("\nThese lines still use the old name; change each:\n{}", edits.join("\n")))
}

/// Lines a rename hint lists at most.
const HINTED_LINES: usize = 5;

/// The assertions of a stated check, with the modules they import.
#[derive(Default)]
struct Code {
    imports: Vec<(String, String)>,
    statements: Vec<String>,
    inspect: bool,
    /// Words after the code: `sys.argv[1:]`.
    args: String,
}

impl Code {
    /// The alias of `file`'s module (`m1`, `m2`, …), imported once.
    fn import(&mut self, file: &str) -> String {
        if let Some((_, alias)) = self.imports.iter().find(|(imported, _)| imported == file) {
            return alias.clone();
        }
        let alias = format!("m{}", self.imports.len() + 1);
        self.imports.push((file.to_string(), alias.clone()));
        alias
    }

    fn push(&mut self, statement: String) {
        self.statements.push(statement);
    }

    /// `python3 -B -c '…'`, or `None` without an assertion.
    fn finish(self) -> Option<String> {
        if self.statements.is_empty() {
            return None;
        }
        let mut lines = Vec::new();
        if !self.args.is_empty() {
            lines.push("import sys".to_string());
        }
        if self.inspect {
            lines.push("import inspect".to_string());
        }
        for (file, alias) in &self.imports {
            // `python3 -c` imports from the workspace; `app/main.py` is `app.main`.
            let module = file.strip_suffix(".py")?.replace('/', ".");
            if !module
                .split('.')
                .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            {
                return None;
            }
            lines.push(format!("import {module} as {alias}"));
        }
        lines.extend(self.statements);
        let code = lines.join("; ");
        // Single-quoted for the shell: the code has no single quotes.
        (!code.contains('\'')).then(|| format!("python3 -B -c '{code}'{}", self.args))
    }
}

/// `text` with its single-quoted Python strings double-quoted (the check is single-quoted for
/// the shell).
fn python_quotes(text: &str) -> String {
    static SINGLE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"'([^'\\\x22]*)'").ok());
    match SINGLE.as_ref() {
        Some(single) => single.replace_all(text, "\"$1\"").into_owned(),
        None => text.to_string(),
    }
}

/// The Python code of a stated check (`python3 -B -c '<code>'`): what a shell command must contain to
/// count as running it (with either quoting).
pub(crate) fn code_of(check: &str) -> Option<&str> {
    check.strip_prefix("python3 -B -c '")?.split('\'').next()
}

#[cfg(test)]
#[path = "stated_tests.rs"]
mod tests;
