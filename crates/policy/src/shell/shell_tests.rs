#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn programs(command: &str) -> Vec<String> {
    let parsed = parse(command);
    assert!(parsed.unknown.is_empty(), "{command}: {:?}", parsed.unknown);
    parsed.commands.iter().map(SimpleCommand::rule_text).collect()
}

#[test]
fn splits_through_every_separator_and_substitution() {
    let table: &[(&str, &[&str])] = &[
        ("git diff; rm x", &["git diff", "rm x"]),
        ("a && b || c & d | e", &["a", "b", "c", "d", "e"]),
        ("echo $(rm x) `rm y`", &["rm x", "rm y", "echo $(rm x) `rm y`"]),
        ("cat <(ls /) >(tee q)", &["ls /", "tee q", "cat <(ls /) >(tee q)"]),
        ("( cd src && ls ) || { pwd; }", &["cd src", "ls", "pwd"]),
        ("ls\nrm -rf x", &["ls", "rm -rf x"]),
        ("bash -c 'rm -rf /tmp/x; ls'", &["rm -rf /tmp/x", "ls"]),
        ("sh -lc \"git push\"", &["git push"]),
        ("eval 'rm' '-rf' x", &["rm -rf x"]),
        ("bash <<< 'rm a'", &["rm a"]),
        ("ls | xargs -0 rm -f", &["ls", "rm -f"]),
        ("find . -name x -exec rm {} \\;", &["rm {}", "find . -name x -exec rm {} ;"]),
        (
            "env -i FOO=1 timeout -s KILL 5 nice -n 3 nohup stdbuf -oL time -p command builtin exec rm y",
            &["rm y"],
        ),
        ("sudo -u root rm z", &["rm z"]),
        ("FOO=bar /bin/rm x", &["rm x"]),
        ("\\rm x; r''m y; $'\\x72\\x6d' z; \"rm\" w", &["rm x", "rm y", "rm z", "rm w"]),
        ("for f in $(ls); do cat $f; done", &["ls", "cat $f"]),
        ("if grep -q x f; then rm f; fi", &["grep -q x f", "rm f"]),
        ("x=$(whoami)", &["whoami", ""]),
    ];
    for (command, expected) in table {
        assert_eq!(programs(command), *expected, "{command}");
    }
}

#[test]
fn what_cannot_be_followed_is_unknown() {
    for command in [
        "$CMD -rf x",
        "bash -c \"$SCRIPT\"",
        "eval \"$X\"",
        "if then fi (((",
        "env -S 'rm -rf x'",
        &"a".repeat(MAX_COMMAND_BYTES + 1),
        "ls\0rm",
    ] {
        let parsed = parse(command);
        assert!(!parsed.unknown.is_empty(), "{command:.40}: {parsed:?}");
    }
}

#[test]
fn redirections_that_write_are_listed() {
    let parsed = parse("ls > out.txt 2>&1; cat x >> log; echo >/dev/null; cat < in; echo >&2; echo &> all");
    let targets: Vec<&str> = parsed.writes.iter().map(|w| w.target.text.as_str()).collect();
    assert_eq!(targets, ["out.txt", "log", "all"]);
}

#[test]
fn cd_is_followed_in_source_order() {
    let parsed = parse("cd /etc && rm -rf x; cd $D; rm y");
    assert_eq!(parsed.commands[1].cwd, Cwd::Path("/etc".into()));
    assert_eq!(parsed.commands[3].cwd, Cwd::Unknown);
}

#[test]
fn fork_bombs_are_recognised() {
    assert_eq!(parse(":(){ :|:& };:").fork_bombs, [":"]);
    assert_eq!(parse("bomb() { bomb | bomb & }; bomb").fork_bombs, ["bomb"]);
    assert!(parse("f() { echo hi; }; f").fork_bombs.is_empty());
}

#[test]
fn substitutions_in_heredocs_and_expansions_are_followed_or_unknown() {
    for command in [
        "git diff <<EOF\n$(touch P38)\nEOF",
        "git diff --stat <<EOF\n`touch U4`\nEOF",
        "cat <<-EOF\n\t$(touch H2)\n\tEOF",
        "cat <<EOF | cat\n$(touch H3)\nEOF",
        "echo \"$(cat <<EOF\n$(touch H6)\nEOF\n)\"",
    ] {
        let parsed = parse(command);
        let seen = parsed.commands.iter().any(|cmd| cmd.program() == Some("touch"));
        assert!(seen || !parsed.unknown.is_empty(), "{command:?}: {parsed:?}");
    }
    for command in ["git diff \"${x:=`touch P28`}\"", "echo ${x:=`touch H4`}", "echo ${x:-$[`touch Q26`]}"] {
        let parsed = parse(command);
        let seen = parsed.commands.iter().any(|cmd| cmd.program() == Some("touch"));
        assert!(seen || !parsed.unknown.is_empty(), "{command:?}: {parsed:?}");
    }
    // A quoted delimiter expands nothing: the body is text.
    assert_eq!(programs("cat <<'EOF'\n$(touch nothing)\nEOF"), ["cat"]);
}
