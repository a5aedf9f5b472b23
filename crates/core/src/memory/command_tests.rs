#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;
use crate::memory::index::render_index;
use crate::memory::test_support::{Fixture, args, meta, now, source, write_entry};
use crate::memory::{Entry, MAX_ENTRY_BYTES, MemoryType, Scope, store, view};

fn create_args(path: &str, text: &str) -> MemoryArgs {
    MemoryArgs { path: Some(path.into()), file_text: Some(text.into()), ..args(MemoryCommandName::Create) }
}

fn run(fx: &Fixture, args: &MemoryArgs) -> Result<Planned, MemoryError> {
    let planned = plan(&fx.roots, args, &source(), now(), None)?;
    apply(&planned)?;
    Ok(planned)
}

fn entry(fx: &Fixture, id: &str) -> Entry {
    let loaded = store::load(&fx.roots);
    loaded.entries.into_iter().find(|entry| entry.id() == id).unwrap_or_else(|| panic!("no {id}"))
}

fn index(fx: &Fixture, scope: Scope) -> String {
    std::fs::read_to_string(fx.roots.root(scope).unwrap().join("MEMORY.md")).unwrap()
}

#[test]
fn create_derives_the_frontmatter_and_writes_the_index() {
    let fx = Fixture::new();
    let planned = plan(
        &fx.roots,
        &create_args(
            "/memories/project/pnpm.md",
            "We use pnpm, not npm, for dependencies.\n\nRun pnpm install.",
        ),
        &source(),
        now(),
        None,
    )
    .unwrap();
    assert!(!fx.roots.project.exists(), "plan has no side effects");
    assert_eq!(planned.message, "saved /memories/project/pnpm.md (project/pnpm)");
    assert_eq!(planned.line, "memory: saved project/pnpm");
    assert_eq!(planned.id, "project/pnpm");
    assert_eq!(planned.writes.len(), 2);
    assert_eq!(planned.writes[1].path, fx.roots.project.join("MEMORY.md"));
    apply(&planned).unwrap();
    let saved = entry(&fx, "project/pnpm");
    let mut expected = meta("pnpm", "We use pnpm, not npm, for dependencies.", MemoryType::Project);
    expected.source = "session 0193abcd turn 2".into();
    expected.created = "2025-06-01T12:00:00Z".into();
    expected.modified = expected.created.clone();
    assert_eq!(saved.meta, expected);
    assert_eq!(saved.body, "We use pnpm, not npm, for dependencies.\n\nRun pnpm install.");
    assert_eq!(
        index(&fx, Scope::Project),
        "# Memory index (project) — maintained by Lathe; edit entries, not this file\n\
         - [project] pnpm — We use pnpm, not npm, for dependencies. (pnpm.md)\n"
    );
    run(&fx, &create_args("/memories/user/editor.md", "Prefers vim keys")).unwrap();
    assert_eq!(entry(&fx, "user/editor").meta.kind, MemoryType::User);
}

#[test]
fn create_takes_model_fields_and_ignores_bookkeeping() {
    let fx = Fixture::new();
    let repo = fx.base().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/x.rs"), "fn x() {}\n").unwrap();
    let text = "---\nname: Answer style\ndescription: Short answers,\n  no summaries\ntype: feedback\n\
                source: forged\ncreated: 1999-01-01T00:00:00Z\nuse_count: 99\nexpires: 2026-01-01\n\
                evidence: [src/x.rs, missing.rs]\n---\n\nKeep answers short.\n";
    let planned =
        plan(&fx.roots, &create_args("/memories/project/style.md", text), &source(), now(), Some(&repo))
            .unwrap();
    apply(&planned).unwrap();
    let saved = entry(&fx, "project/style");
    assert_eq!(saved.meta.name, "Answer style");
    assert_eq!(saved.meta.description, "Short answers, no summaries");
    assert_eq!(saved.meta.kind, MemoryType::Feedback);
    assert_eq!(saved.meta.source, "session 0193abcd turn 2");
    assert_eq!((saved.meta.created.as_str(), saved.meta.use_count), ("2025-06-01T12:00:00Z", 0));
    assert_eq!(saved.meta.expires.as_deref(), Some("2026-01-01"));
    let blob = crate::memory::stale::git_blob_id(b"fn x() {}\n");
    assert_eq!(saved.meta.evidence, [format!("src/x.rs@{blob}"), "missing.rs".to_string()]);
    assert_eq!(saved.body, "Keep answers short.");
}

#[test]
fn create_over_an_entry_keeps_created_and_use_count() {
    let fx = Fixture::new();
    let mut old = meta("pnpm", "old", MemoryType::Project);
    old.created = "2025-01-01T00:00:00Z".into();
    old.use_count = 7;
    old.last_used = Some("2025-05-30T00:00:00Z".into());
    write_entry(&fx.roots.project, "pnpm.md", &old, "old body");
    let planned = run(&fx, &create_args("/memories/project/pnpm.md", "new body")).unwrap();
    assert_eq!(planned.line, "memory: updated project/pnpm");
    assert_eq!(planned.writes[0].before.as_deref().map(|text| text.contains("old body")), Some(true));
    let saved = entry(&fx, "project/pnpm");
    assert_eq!((saved.meta.created.as_str(), saved.meta.use_count), ("2025-01-01T00:00:00Z", 7));
    assert_eq!(saved.meta.last_used.as_deref(), Some("2025-05-30T00:00:00Z"));
    assert_eq!((saved.meta.description.as_str(), saved.body.as_str()), ("new body", "new body"));
}

#[test]
fn create_refuses_bad_arguments() {
    let fx = Fixture::new();
    let table: &[(&str, &str)] = &[
        ("---\nname: [x\n---\nbody", "not valid YAML"),
        ("---\nname: x\nbody", "no closing"),
        ("---\ntype: person\n---\nbody", "unknown memory type `person`"),
        ("---\nexpires: soon\n---\nbody", "expires `soon`"),
        ("---\nevidence: [../etc/passwd]\n---\nbody", "relative to the repository root"),
        ("---\nname: x\n---\n\n", "no content"),
        ("   \n", "no content"),
    ];
    for (text, expected) in table {
        let error = plan(&fx.roots, &create_args("/memories/project/a.md", text), &source(), now(), None)
            .unwrap_err();
        assert!(error.to_string().contains(expected), "{text:?}: {error}");
    }
    let missing =
        MemoryArgs { path: Some("/memories/project/a.md".into()), ..args(MemoryCommandName::Create) };
    let error = plan(&fx.roots, &missing, &source(), now(), None).unwrap_err();
    assert_eq!(error.to_string(), "memory: `create` needs the `file_text` argument; nothing was written");
    assert!(!fx.roots.project.exists());
}

#[test]
fn writes_to_the_shared_scope_point_at_promote() {
    let fx = Fixture::new();
    let error =
        plan(&fx.roots, &create_args("/memories/shared/a.md", "x"), &source(), now(), None).unwrap_err();
    assert!(matches!(error, MemoryError::ReadOnly { .. }));
    assert!(error.to_string().contains("lathe memory promote"), "{error}");
}

#[test]
fn secrets_are_refused_before_anything() {
    let fx = Fixture::new();
    let text = "The AWS key is AKIAIOSFODNN7EXAMPLE";
    let error =
        plan(&fx.roots, &create_args("/memories/project/aws.md", text), &source(), now(), None).unwrap_err();
    let MemoryError::Secret { kinds } = &error else { panic!("{error}") };
    assert_eq!(kinds, &["aws-access-key"]);
    let message = error.to_string();
    assert!(message.contains("looks like a secret (aws-access-key)"), "{message}");
    assert!(message.contains("memories never hold secrets") && message.contains("nothing was"), "{message}");
    assert!(message.contains("1Password item"), "{message}");
    let redacted = create_args("/memories/project/aws.md", "key: [REDACTED:aws-access-key]");
    let error = plan(&fx.roots, &redacted, &source(), now(), None).unwrap_err();
    assert!(matches!(&error, MemoryError::Secret { kinds } if kinds == &["aws-access-key"]), "{error}");
    let edit = MemoryArgs {
        path: Some("/memories/project/nope.md".into()),
        old_str: Some("x".into()),
        new_str: Some(format!("ghp_{}", "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6")),
        ..args(MemoryCommandName::StrReplace)
    };
    assert!(matches!(plan(&fx.roots, &edit, &source(), now(), None), Err(MemoryError::Secret { .. })));
    assert!(!fx.roots.project.exists());
}

#[test]
fn str_replace_needs_exactly_one_occurrence() {
    let fx = Fixture::new();
    run(&fx, &create_args("/memories/project/n.md", "alpha\nbeta\nalpha again")).unwrap();
    let replace = |old: &str, new: &str| MemoryArgs {
        path: Some("/memories/project/n.md".into()),
        old_str: Some(old.into()),
        new_str: Some(new.into()),
        ..args(MemoryCommandName::StrReplace)
    };
    let error = run(&fx, &replace("alpha", "x")).unwrap_err();
    assert!(error.to_string().contains("occurs 2 times in `/memories/project/n.md` (lines 1, 3)"), "{error}");
    let error = run(&fx, &replace("gamma", "x")).unwrap_err();
    assert!(error.to_string().contains("occurs 0 times"), "{error}");
    let later = now() + chrono::Duration::hours(1);
    let planned = plan(&fx.roots, &replace("beta", "BETA"), &source(), later, None).unwrap();
    assert_eq!(planned.line, "memory: updated project/n");
    assert_eq!(planned.writes.len(), 1, "the index did not change");
    apply(&planned).unwrap();
    let saved = entry(&fx, "project/n");
    assert_eq!(saved.body, "alpha\nBETA\nalpha again");
    assert_eq!(
        (saved.meta.created.as_str(), saved.meta.modified.as_str()),
        ("2025-06-01T12:00:00Z", "2025-06-01T13:00:00Z")
    );
    let missing = MemoryArgs { path: Some("/memories/project/none.md".into()), ..replace("a", "b") };
    assert!(matches!(run(&fx, &missing), Err(MemoryError::NotFound { .. })));
}

#[test]
fn insert_goes_after_the_given_line() {
    let fx = Fixture::new();
    run(&fx, &create_args("/memories/project/n.md", "one\ntwo")).unwrap();
    let insert = |line: u32, text: &str| MemoryArgs {
        path: Some("/memories/project/n.md".into()),
        insert_line: Some(line),
        insert_text: Some(text.into()),
        ..args(MemoryCommandName::Insert)
    };
    run(&fx, &insert(0, "zero\n")).unwrap();
    run(&fx, &insert(3, "three")).unwrap();
    run(&fx, &insert(1, "half")).unwrap();
    assert_eq!(entry(&fx, "project/n").body, "zero\nhalf\none\ntwo\nthree");
    let error = run(&fx, &insert(9, "x")).unwrap_err();
    assert!(error.to_string().contains("insert_line 9 is past the end"), "{error}");
    assert!(error.to_string().contains("use 0 to 5"), "{error}");
}

#[test]
fn delete_removes_the_file_and_its_index_line() {
    let fx = Fixture::new();
    run(&fx, &create_args("/memories/project/a.md", "a")).unwrap();
    run(&fx, &create_args("/memories/project/b.md", "b")).unwrap();
    let delete =
        MemoryArgs { path: Some("/memories/project/a.md".into()), ..args(MemoryCommandName::Delete) };
    let planned = run(&fx, &delete).unwrap();
    assert_eq!(planned.line, "memory: deleted project/a");
    assert_eq!(planned.writes[0].after, None);
    assert!(!fx.roots.project.join("a.md").exists());
    assert!(!index(&fx, Scope::Project).contains("(a.md)"));
    assert!(index(&fx, Scope::Project).contains("(b.md)"));
    assert!(matches!(run(&fx, &delete), Err(MemoryError::NotFound { .. })));
}

#[test]
fn rename_moves_within_and_across_scopes() {
    let fx = Fixture::new();
    run(&fx, &create_args("/memories/project/a.md", "a body")).unwrap();
    run(&fx, &create_args("/memories/project/b.md", "b body")).unwrap();
    let rename = |from: &str, to: &str| MemoryArgs {
        old_path: Some(from.into()),
        new_path: Some(to.into()),
        ..args(MemoryCommandName::Rename)
    };
    let planned = run(&fx, &rename("/memories/project/a.md", "/memories/project/dir/c.md")).unwrap();
    assert_eq!(planned.line, "memory: renamed project/a to project/dir/c");
    assert_eq!(
        planned.message,
        "renamed /memories/project/a.md to /memories/project/dir/c.md (project/dir/c)"
    );
    assert_eq!(planned.writes.len(), 3, "new file, old file, one index");
    assert_eq!(entry(&fx, "project/dir/c").body, "a body");
    assert!(
        index(&fx, Scope::Project).contains("(dir/c.md)") && !index(&fx, Scope::Project).contains("(a.md)")
    );

    let planned = run(&fx, &rename("/memories/project/b.md", "/memories/user/b.md")).unwrap();
    assert_eq!(planned.writes.len(), 4, "new file, old file, two indexes");
    assert!(index(&fx, Scope::User).contains("(b.md)"));
    assert!(!index(&fx, Scope::Project).contains("(b.md)"));
    assert_eq!(entry(&fx, "user/b").meta.source, "session 0193abcd turn 2");

    let error = run(&fx, &rename("/memories/user/b.md", "/memories/project/dir/c.md")).unwrap_err();
    assert!(matches!(error, MemoryError::AlreadyExists { .. }), "{error}");
    assert!(matches!(
        run(&fx, &rename("/memories/user/zz.md", "/memories/user/y.md")),
        Err(MemoryError::NotFound { .. })
    ));
}

#[test]
fn the_201st_index_line_is_refused_and_nothing_changes() {
    let fx = Fixture::new();
    for i in 0..199 {
        write_entry(
            &fx.roots.project,
            &format!("e{i:03}.md"),
            &meta(&format!("e{i}"), "d", MemoryType::Project),
            "b",
        );
    }
    let loaded = store::load_scope(&fx.roots, Scope::Project);
    let refs: Vec<&Entry> = loaded.entries.iter().collect();
    std::fs::write(fx.roots.project.join("MEMORY.md"), render_index(Scope::Project, &refs)).unwrap();
    let before = index(&fx, Scope::Project);
    assert_eq!(before.lines().count(), 200);
    let error = run(&fx, &create_args("/memories/project/one-more.md", "x")).unwrap_err();
    assert!(matches!(error, MemoryError::IndexFull { lines: 201, max_lines: 200, .. }), "{error}");
    assert!(error.to_string().contains("Nothing was cut or written"), "{error}");
    assert_eq!(index(&fx, Scope::Project), before);
    assert!(!fx.roots.project.join("one-more.md").exists());
    // Replacing an entry does not grow the index, and a delete shrinks it.
    run(&fx, &create_args("/memories/project/e000.md", "new")).unwrap();
    let delete =
        MemoryArgs { path: Some("/memories/project/e001.md".into()), ..args(MemoryCommandName::Delete) };
    run(&fx, &delete).unwrap();
    run(&fx, &create_args("/memories/project/one-more.md", "x")).unwrap();
}

#[test]
fn a_memory_over_64_kib_is_refused() {
    let fx = Fixture::new();
    let text = "x".repeat(MAX_ENTRY_BYTES);
    let error = run(&fx, &create_args("/memories/project/big.md", &text)).unwrap_err();
    assert!(matches!(error, MemoryError::EntryTooLarge { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains("/memories/project/big.md") && message.contains("65536 bytes"), "{message}");
    assert!(!fx.roots.project.exists());
}

#[test]
fn view_lists_folders_and_numbers_lines() {
    let fx = Fixture::new();
    run(&fx, &create_args("/memories/project/pnpm.md", "We use pnpm.\nNot npm.\nNot yarn.")).unwrap();
    run(&fx, &create_args("/memories/project/dir/x.md", "x")).unwrap();
    write_entry(
        &fx.roots.shared.clone().unwrap(),
        "team.md",
        &meta("team", "Team notes", MemoryType::Reference),
        "t",
    );
    std::fs::write(fx.roots.project.join("broken.md"), "no frontmatter here").unwrap();

    let listing = view(&fx.roots, "/memories/project", None).unwrap();
    assert!(listing.starts_with("/memories/project/ (3 entries)\n"), "{listing}");
    assert!(listing.contains("/memories/project/pnpm.md  "), "{listing}");
    assert!(listing.contains("bytes  [project] We use pnpm."), "{listing}");
    assert!(
        listing.contains("/memories/project/broken.md")
            && listing.contains("(frontmatter missing or broken)")
    );
    assert!(listing.contains("warning: /memories/project/broken.md: no YAML frontmatter"), "{listing}");
    assert!(!listing.contains(&fx.base().display().to_string()), "no real paths: {listing}");
    let sub = view(&fx.roots, "/memories/project/dir", None).unwrap();
    assert!(sub.starts_with("/memories/project/dir/ (1 entries)") && sub.contains("dir/x.md"), "{sub}");
    let root = view(&fx.roots, "/memories", None).unwrap();
    assert!(root.contains("/memories/user/ (0 entries)\n  (no memories yet)"), "{root}");
    assert!(root.contains("/memories/shared/ (1 entries, read only)"), "{root}");

    let file = view(&fx.roots, "/memories/project/pnpm.md", None).unwrap();
    assert_eq!(
        file,
        "/memories/project/pnpm.md — [project] pnpm: We use pnpm. (source: session 0193abcd turn 2; \
         modified 2025-06-01T12:00:00Z; used 0 times)\n     1\tWe use pnpm.\n     2\tNot npm.\n     3\tNot yarn.\n"
    );
    let part = view(&fx.roots, "/memories/project/pnpm.md", Some(&[2, -1])).unwrap();
    assert!(part.ends_with("     2\tNot npm.\n     3\tNot yarn.\n") && !part.contains("     1\t"), "{part}");
    let one = view(&fx.roots, "/memories/project/pnpm.md", Some(&[2, 2])).unwrap();
    assert!(one.ends_with("     2\tNot npm.\n"), "{one}");
    for range in [&[0, 2][..], &[4, -1], &[3, 2], &[1]] {
        assert!(view(&fx.roots, "/memories/project/pnpm.md", Some(range)).is_err(), "{range:?}");
    }
    let index = view(&fx.roots, "/memories/project/MEMORY.md", None).unwrap();
    assert!(index.contains("     1\t# Memory index (project)"), "{index}");
    assert!(view(&fx.roots, "/memories/shared/team.md", None).unwrap().contains("     1\tt"));
    assert!(matches!(view(&fx.roots, "/memories/project/none.md", None), Err(MemoryError::NotFound { .. })));
    assert!(matches!(view(&fx.roots, "/memories/project/nodir", None), Err(MemoryError::NotFound { .. })));

    let through_plan =
        MemoryArgs { path: Some("/memories/project/pnpm.md".into()), ..args(MemoryCommandName::View) };
    let planned = plan(&fx.roots, &through_plan, &source(), now(), None).unwrap();
    assert_eq!((planned.writes.len(), planned.id.as_str()), (0, "project/pnpm"));
    assert_eq!(planned.message, file);
}

#[test]
fn promote_copies_a_project_entry_into_the_shared_scope() {
    let fx = Fixture::new();
    let mut used = meta("pnpm", "We use pnpm", MemoryType::Project);
    used.use_count = 4;
    used.last_used = Some("2025-05-30T00:00:00Z".into());
    write_entry(&fx.roots.project, "pnpm.md", &used, "We use pnpm.");
    let planned = promote(&fx.roots, "project/pnpm").unwrap();
    assert_eq!(planned.line, "memory: promoted project/pnpm to shared/pnpm");
    apply(&planned).unwrap();
    let shared = entry(&fx, "shared/pnpm");
    assert_eq!((shared.meta.use_count, shared.meta.last_used.clone()), (0, None));
    assert_eq!(shared.body, "We use pnpm.");
    assert!(index(&fx, Scope::Shared).contains("- [project] pnpm — We use pnpm (pnpm.md)"));
    assert!(fx.roots.project.join("pnpm.md").exists(), "the private entry stays");
    assert!(matches!(promote(&fx.roots, "user/pnpm"), Err(MemoryError::InvalidArgument { .. })));
    assert!(matches!(promote(&fx.roots, "project/none"), Err(MemoryError::NotFound { .. })));
    assert!(matches!(promote(&fx.roots, "pnpm"), Err(MemoryError::InvalidId { .. })));
    let outside = Roots { shared: None, ..fx.roots.clone() };
    assert!(matches!(promote(&outside, "project/pnpm"), Err(MemoryError::NoSharedScope)));
}

#[test]
fn remove_deletes_by_id() {
    let fx = Fixture::new();
    run(&fx, &create_args("/memories/project/feedback/tone.md", "Short answers")).unwrap();
    let planned = remove(&fx.roots, "project/feedback/tone").unwrap();
    assert_eq!(planned.line, "memory: deleted project/feedback/tone");
    apply(&planned).unwrap();
    assert!(store::load(&fx.roots).entries.is_empty());
    assert!(matches!(remove(&fx.roots, "project/feedback/tone"), Err(MemoryError::NotFound { .. })));
    assert!(matches!(remove(&fx.roots, "shared/x"), Err(MemoryError::InvalidArgument { .. })));
    assert!(matches!(remove(&fx.roots, "project/../x"), Err(MemoryError::InvalidPath { .. })));
}

#[test]
fn apply_refuses_a_file_changed_since_the_plan() {
    let fx = Fixture::new();
    let planned =
        plan(&fx.roots, &create_args("/memories/project/a.md", "a"), &source(), now(), None).unwrap();
    std::fs::create_dir_all(&fx.roots.project).unwrap();
    std::fs::write(fx.roots.project.join("a.md"), "written meanwhile").unwrap();
    let error = apply(&planned).unwrap_err();
    assert!(matches!(error, MemoryError::Conflict { .. }), "{error}");
    assert_eq!(std::fs::read_to_string(fx.roots.project.join("a.md")).unwrap(), "written meanwhile");
}

#[test]
fn apply_names_the_path_it_cannot_write() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.roots.project.parent().unwrap()).unwrap();
    std::fs::write(&fx.roots.project, "a file where the folder should be").unwrap();
    let planned = FileWrite { path: fx.roots.project.join("a.md"), before: None, after: Some("x".into()) };
    let error = apply(&Planned {
        writes: vec![planned],
        message: String::new(),
        line: String::new(),
        id: String::new(),
    })
    .unwrap_err();
    assert!(error.to_string().contains(&fx.roots.project.display().to_string()), "{error}");
}

#[test]
fn arguments_deserialise_and_have_a_schema() {
    let args: MemoryArgs = serde_json::from_value(serde_json::json!({
        "command": "str_replace", "path": "/memories/project/a.md", "old_str": "a", "new_str": "b"
    }))
    .unwrap();
    assert_eq!(args.command, MemoryCommandName::StrReplace);
    let schema = serde_json::to_value(schemars::schema_for!(MemoryArgs)).unwrap();
    let properties = &schema["properties"];
    for name in [
        "command",
        "path",
        "file_text",
        "old_str",
        "new_str",
        "insert_line",
        "insert_text",
        "old_path",
        "new_path",
        "view_range",
    ] {
        assert!(properties.get(name).is_some(), "{name}: {schema}");
    }
    assert_eq!(
        properties["old_str"]["description"],
        "str_replace: the exact text to replace; it must occur once."
    );
}
