//! Recognising an option however it is spelled: `--name`, `--name=value`, an abbreviation
//! (`--out=f` for `--output`, which GNU getopt and git's parse-options accept when unambiguous),
//! and a short option inside a cluster (`-ro f` is `-r -o f`).

/// Whether `arg` is the long option `--name`, alone or with an attached `=value`.
pub(super) fn long(arg: &str, name: &str) -> bool {
    arg.strip_prefix("--").is_some_and(|rest| rest.split('=').next() == Some(name))
}

/// Whether `arg` is the long option `--name` or an abbreviation of it at least `min` characters
/// long, alone or with an attached `=value`.
pub(super) fn long_abbrev(arg: &str, name: &str, min: usize) -> bool {
    arg.strip_prefix("--").is_some_and(|rest| {
        let given = rest.split('=').next().unwrap_or("");
        given.len() >= min.max(1) && name.starts_with(given)
    })
}

/// Whether the short-option cluster `arg` (`-abc`) contains `-flag`. Reading stops at the first
/// option in `with_value`, whose value is the rest of the cluster (`-e-O` is the pattern `-O`).
pub(super) fn short_cluster(arg: &str, flag: char, with_value: &str) -> bool {
    let Some(cluster) = arg.strip_prefix('-') else { return false };
    if cluster.starts_with('-') {
        return false;
    }
    for c in cluster.chars() {
        if c == flag {
            return true;
        }
        if with_value.contains(c) {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_recognised_in_every_spelling() {
        assert!(long("--output=x", "output") && long("--output", "output"));
        assert!(!long("--output-indicator-new=x", "output") && !long("-output", "output"));
        assert!(long_abbrev("--op=vim", "open-files-in-pager", 2));
        assert!(long_abbrev("--open-files-in-pager", "open-files-in-pager", 2));
        assert!(!long_abbrev("--o", "open-files-in-pager", 2) && !long_abbrev("--", "output", 0));
        assert!(!long_abbrev("--or", "open-files-in-pager", 2));
        assert!(short_cluster("-O", 'O', "e") && short_cluster("-iOvim", 'O', "e"));
        assert!(
            !short_cluster("-eO", 'O', "e") && !short_cluster("--O", 'O', "") && !short_cluster("x", 'x', "")
        );
    }
}
