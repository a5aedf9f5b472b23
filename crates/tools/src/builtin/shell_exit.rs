//! What a command's exit status means when it is not a failure: exit 1 of `grep`, `diff` or `test`.

/// What exit status 1 means for the last command of the line, when it is not a failure:
/// `grep`/`rg` found no match, `diff`/`cmp` found a difference, `test`/`[` was false.
pub fn explain_exit_1(command: &str) -> Option<&'static str> {
    let last = last_simple_command(command);
    let program = last.split_whitespace().find(|word| *word != "!" && !is_assignment(word))?;
    let program = program.rsplit('/').next().unwrap_or(program);
    match program {
        "grep" | "egrep" | "fgrep" | "rg" | "ag" => Some("exit 1: no match"),
        "diff" | "cmp" => Some("exit 1: files differ"),
        "test" | "[" | "[[" => Some("exit 1: condition false"),
        _ => None,
    }
}

/// The text after the last unquoted `|`, `;`, newline or `&` (not counting the `&` of
/// redirections like `2>&1` or `&>`), trimmed; good enough to name the program whose status bash
/// returns.
fn last_simple_command(command: &str) -> &str {
    let bytes = command.as_bytes();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut start = 0;
    let mut last = "";
    for (i, &b) in bytes.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match b {
            b'\\' if !single => escaped = true,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'|' | b';' | b'\n' | b'&' if !single && !double => {
                let redirection = b == b'&'
                    && (matches!(i.checked_sub(1).map(|j| bytes[j]), Some(b'>' | b'<'))
                        || bytes.get(i + 1) == Some(&b'>'));
                if !redirection {
                    let segment = command[start..i].trim();
                    if !segment.is_empty() {
                        last = segment;
                    }
                    start = i + 1;
                }
            }
            _ => {}
        }
    }
    let tail = command[start..].trim();
    if tail.is_empty() { last } else { tail }
}

/// `NAME=value` (an environment assignment before the command).
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}
