#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn arguments_and_positions_are_substituted() {
    assert_eq!(substitute_arguments("Hi $ARGUMENTS!", "Bob Smith"), "Hi Bob Smith!");
    assert_eq!(substitute_arguments("$2 then $1, $3.", "a 'b c'"), "b c then a, .");
    assert_eq!(substitute_arguments("cost $5 is $x", ""), "cost  is $x");
    assert_eq!(substitute_arguments("Review.", "src/a.rs"), "Review.\n\nARGUMENTS: src/a.rs");
}

fn context(dir: &Path, mode: lathe_policy::PermissionMode) -> ExpandContext {
    ExpandContext {
        workspace: dir.to_path_buf(),
        lathe_home: dir.join("home"),
        skills: Arc::new(SkillSet::default()),
        policy: Arc::new(Policy::with_mode(mode, dir)),
        shell: lathe_tools::ToolRegistry::builtin().get("shell"),
        tool_ctx: ToolContext::new(dir.to_path_buf()),
    }
}

#[tokio::test]
async fn namespaced_command_with_includes_and_bang_output() {
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(".claude/commands/frontend");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("lint.md"),
        "---\ndescription: Lint it\nmodel: small-model\n---\nLint $1 with @notes.txt: !`echo from-shell`\n\
         Made: !`touch made.txt && echo made`\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "use tabs").unwrap();

    let ctx = context(dir.path(), lathe_policy::PermissionMode::Bypass);
    let done = expand("/frontend:lint app.ts", &ctx).await.unwrap().unwrap();
    assert_eq!(done.model.as_deref(), Some("small-model"));
    assert!(done.text.starts_with("Lint app.ts with @notes.txt: from-shell"), "{}", done.text);
    assert!(done.text.contains("Contents of notes.txt:\n```\nuse tabs\n```"), "{}", done.text);
    assert!(done.text.contains("Made: made"), "{}", done.text);
    assert!(done.warnings.is_empty());
    std::fs::remove_file(dir.path().join("made.txt")).unwrap();

    // Default mode: the read-only command runs, the one that writes needs approval, which
    // nobody can give while a command expands: it is not run and leaves no output.
    let ctx = context(dir.path(), lathe_policy::PermissionMode::Default);
    let done = expand("/frontend:lint app.ts", &ctx).await.unwrap().unwrap();
    assert!(done.text.starts_with("Lint app.ts with @notes.txt: from-shell"), "{}", done.text);
    assert!(!done.text.contains("Made: made"), "{}", done.text);
    assert!(
        done.text.contains("[!`touch made.txt && echo made` not run: permission denied"),
        "{}",
        done.text
    );
    assert!(!dir.path().join("made.txt").exists());
    assert_eq!(done.warnings.len(), 1);

    let ctx = context(dir.path(), lathe_policy::PermissionMode::Plan);
    let done = expand("/frontend:lint app.ts", &ctx).await.unwrap().unwrap();
    assert!(!dir.path().join("made.txt").exists(), "plan mode never writes: {}", done.text);

    assert!(expand("/unknown x", &ctx).await.is_none());
    assert!(expand("not a command", &ctx).await.is_none());
    let (all, warnings) = list(dir.path(), &dir.path().join("home"));
    assert_eq!(all.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["frontend:lint"]);
    assert_eq!(all[0].description, "Lint it");
    assert!(warnings.is_empty());
}
