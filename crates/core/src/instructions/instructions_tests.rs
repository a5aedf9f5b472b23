use super::*;

struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    lathe: PathBuf,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    let home = tmp.path().join("home");
    let lathe = home.join(".lathe");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(&lathe).unwrap();
    Tree { _tmp: tmp, root, home, lathe }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn sources(tree: &Tree, cwd: &Path) -> Sources {
    Sources {
        cwd: cwd.to_path_buf(),
        lathe_home: tree.lathe.clone(),
        user_home: Some(tree.home.clone()),
        max_bytes: DEFAULT_MAX_BYTES,
    }
}

fn order(text: &str, parts: &[&str]) {
    let positions: Vec<usize> = parts
        .iter()
        .map(|part| text.find(part).unwrap_or_else(|| panic!("{part} missing from:\n{text}")))
        .collect();
    assert!(positions.windows(2).all(|pair| pair[0] < pair[1]), "out of order {parts:?}:\n{text}");
}

#[test]
fn nested_files_come_outermost_first_and_an_override_replaces_agents_md() {
    let t = tree();
    let sub = t.root.join("pkg/inner");
    write(&t.root.parent().unwrap().join("AGENTS.md"), "outside the repo");
    write(&t.lathe.join("AGENTS.md"), "lathe global");
    write(&t.home.join(".claude/CLAUDE.md"), "claude global");
    write(&t.root.join("AGENTS.md"), "root agents");
    write(&t.root.join(".claude/CLAUDE.md"), "root dot-claude");
    write(&t.root.join("CLAUDE.local.md"), "root local");
    write(&t.root.join("pkg/AGENTS.md"), "pkg agents, replaced");
    write(&t.root.join("pkg/AGENTS.override.md"), "pkg override");
    write(&t.root.join("pkg/CLAUDE.md"), "pkg claude");
    write(&sub.join("AGENTS.md"), "inner agents");
    let found = gather(&sources(&t, &sub));
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    order(
        &found.text,
        &[
            "lathe global",
            "claude global",
            "root agents",
            "root dot-claude",
            "root local",
            "pkg override",
            "pkg claude",
            "inner agents",
        ],
    );
    assert!(!found.text.contains("outside the repo"));
    assert!(!found.text.contains("replaced"));
}

#[test]
fn imports_relative_home_cycles_depth_and_code_blocks() {
    let t = tree();
    write(
        &t.root.join("AGENTS.md"),
        "Style: @docs/style.md\nPersonal: @~/notes.md\nMissing: @docs/nope.md\n```\n@docs/in-block.md\n```\n`@docs/in-span.md`\nChain: @chain/1.md",
    );
    write(&t.root.join("docs/style.md"), "STYLE RULES; see @../AGENTS.md for the top");
    write(&t.root.join("docs/in-block.md"), "NEVER INCLUDED (block)");
    write(&t.root.join("docs/in-span.md"), "NEVER INCLUDED (span)");
    write(&t.home.join("notes.md"), "HOME NOTES");
    for level in 1..=6 {
        write(&t.root.join(format!("chain/{level}.md")), &format!("LEVEL {level} @{}.md", level + 1));
    }
    write(&t.root.join("chain/7.md"), "LEVEL 7");
    let found = gather(&sources(&t, &t.root));
    order(&found.text, &["Style:", "STYLE RULES", "HOME NOTES", "LEVEL 1", "LEVEL 5"]);
    assert!(found.text.contains("(imported by"), "{}", found.text);
    assert!(!found.text.contains("NEVER INCLUDED"), "{}", found.text);
    assert!(!found.text.contains("LEVEL 6"), "depth 6 is refused:\n{}", found.text);
    let warnings = found.warnings.join("\n");
    assert!(warnings.contains("import cycle") && warnings.contains("style.md"), "{warnings}");
    assert!(warnings.contains("@docs/nope.md") && warnings.contains("does not exist"), "{warnings}");
    assert!(warnings.contains("@6.md") && warnings.contains("deeper than 5"), "{warnings}");
    assert_eq!(found.warnings.len(), 3, "{warnings}");
}

#[test]
fn bad_files_are_skipped_with_a_warning_and_nothing_else_is_affected() {
    let t = tree();
    write(&t.root.join("AGENTS.md"), "GOOD ROOT @binary.md @huge.md @latin1.md @loop.md @dangling.md");
    std::fs::write(t.root.join("binary.md"), b"\x7fELF\x00\x01").unwrap();
    std::fs::write(t.root.join("huge.md"), vec![b'a'; MAX_FILE_BYTES as usize + 1]).unwrap();
    std::fs::write(t.root.join("latin1.md"), b"caf\xe9").unwrap();
    std::os::unix::fs::symlink("loop.md", t.root.join("loop.md")).unwrap();
    std::os::unix::fs::symlink("gone.md", t.root.join("dangling.md")).unwrap();
    write(&t.root.join("CLAUDE.md"), "GOOD CLAUDE");
    let found = gather(&sources(&t, &t.root));
    order(&found.text, &["GOOD ROOT", "GOOD CLAUDE"]);
    let warnings = found.warnings.join("\n");
    for expected in
        ["binary, not text", "byte limit for one file", "not UTF-8", "a symlink loop", "does not exist"]
    {
        assert!(warnings.contains(expected), "{expected} missing from:\n{warnings}");
    }
}

#[test]
fn the_size_cap_cuts_and_names_what_was_cut() {
    let t = tree();
    write(&t.root.join("AGENTS.md"), &"a".repeat(3_000));
    write(&t.root.join("CLAUDE.md"), &"b".repeat(3_000));
    write(&t.root.join("CLAUDE.local.md"), "local");
    let mut src = sources(&t, &t.root);
    src.max_bytes = 4_000;
    let found = gather(&src);
    assert!(found.text.len() <= 4_000 + 60, "{}", found.text.len());
    assert!(found.text.contains("[instructions cut here at the size limit]"));
    let warnings = found.warnings.join("\n");
    assert!(warnings.contains("CLAUDE.md (cut after"), "{warnings}");
    assert!(warnings.contains("CLAUDE.local.md (left out)"), "{warnings}");
    assert!(warnings.contains("4000 bytes"), "{warnings}");
}

#[test]
fn rules_with_paths_wait_for_a_matching_read_and_the_others_apply_at_once() {
    let t = tree();
    write(
        &t.root.join(".claude/rules/api.md"),
        "---\npaths:\n  - \"src/api/**/*.rs\"\n---\nHandlers return ApiError.\n",
    );
    write(&t.root.join(".claude/rules/style/general.md"), "Always run cargo fmt.\n");
    write(&t.home.join(".claude/rules/mine.md"), "---\npaths: \"**/*.md\"\n---\nWrap at 100.\n");
    write(&t.root.join(".claude/rules/bad.md"), "---\npaths: \"src/[\"\n---\nbroken\n");
    let found = gather(&sources(&t, &t.root));
    assert!(found.text.contains("Always run cargo fmt."));
    assert!(!found.text.contains("ApiError") && !found.text.contains("Wrap at 100"));
    let globs: Vec<&[String]> = found.rules.rules.iter().map(|rule| rule.globs.as_slice()).collect();
    assert_eq!(globs, [&["src/api/**/*.rs".to_string()][..], &["**/*.md".to_string()][..]]);
    assert!(found.rules.rules[0].applies_to(&t.root.join("src/api/users.rs")));
    assert!(
        found.warnings.iter().any(|w| w.contains("bad.md") && w.contains("glob")),
        "{:?}",
        found.warnings
    );
}
