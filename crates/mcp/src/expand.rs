//! `${VAR}` and `${VAR:-default}` expansion in MCP configuration, as Claude Code does it: in a
//! server's `command`, `args`, `env`, `url` and `headers`. A variable that is not set (or is
//! empty, for the `:-` form) takes the default; one without a default is an error naming it, so
//! a server never starts with a silently empty token. `$` not followed by `{` is kept as written.

/// Expands every `${NAME}` / `${NAME:-default}` in `text` using `env`.
///
/// Errors: `${NAME}` with `NAME` unset ("${GITHUB_TOKEN} is not set and has no default"), or an
/// unterminated `${`.
pub fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unterminated `${{` in {text:?}"));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`${{{inner}}}` is not a variable reference"));
        }
        let value = env(name).filter(|value| default.is_none() || !value.is_empty());
        match (value, default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(format!("${{{name}}} is not set and has no default")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_set_variables_defaults_and_leaves_plain_dollars() {
        let cases = [
            ("Bearer ${TOKEN}", "Bearer s3cret"),
            ("${MISSING:-fallback}", "fallback"),
            ("${TOKEN:-unused}", "s3cret"),
            ("${EMPTY:-was empty}", "was empty"),
            ("${EMPTY}", ""),
            ("cost $5 and ${TOKEN}${TOKEN}", "cost $5 and s3crets3cret"),
            ("${MISSING:-}", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(expand(input, &env).as_deref(), Ok(expected), "{input}");
        }
    }

    #[test]
    fn an_unset_variable_without_default_is_an_error_naming_it() {
        let error = expand("Bearer ${GITHUB_TOKEN}", &env).unwrap_err();
        assert!(error.contains("${GITHUB_TOKEN} is not set"), "{error}");
        assert!(expand("${UNCLOSED", &env).unwrap_err().contains("unterminated"));
        assert!(expand("${not a var}", &env).unwrap_err().contains("not a variable"));
    }
}
