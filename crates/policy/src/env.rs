//! Which environment variables a command must not see (FEATURES.md §D "secrets"): names that
//! contain `KEY`, `SECRET`, `TOKEN`, `PASSWORD`, `PASSWD` or `CREDENTIAL` (any case), and the
//! provider key variables Lathe itself reads, unless the user lists them in `shell_env.keep`.

/// Whether a variable called `name` holds a secret by its name.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"].iter().any(|word| upper.contains(word))
}

/// The names among `vars` to remove from a command's environment: secret names
/// ([`is_secret_name`]) and `extra` (the provider key variables of the configuration), except those
/// in `keep`.
pub fn to_remove<'a>(
    vars: impl IntoIterator<Item = &'a str>,
    extra: &[String],
    keep: &[String],
) -> Vec<String> {
    vars.into_iter()
        .filter(|name| is_secret_name(name) || extra.iter().any(|e| e == name))
        .filter(|name| !keep.iter().any(|k| k == name))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_removed_unless_kept() {
        let vars = [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "HOME",
            "PATH",
            "MY_LLM",
            "aws_secret_access_key",
        ];
        let removed = to_remove(vars, &["MY_LLM".to_string()], &["GITHUB_TOKEN".to_string()]);
        assert_eq!(
            removed,
            vec!["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DB_PASSWORD", "MY_LLM", "aws_secret_access_key"]
        );
    }
}
