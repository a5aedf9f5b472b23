#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;
use crate::memory::MemoryType;
use crate::memory::test_support::{Fixture, meta, write_entry};

#[test]
fn loads_every_scope_in_order_without_the_indexes() {
    let fx = Fixture::new();
    let shared = fx.roots.shared.clone().unwrap();
    write_entry(&fx.roots.project, "zeta.md", &meta("zeta", "z", MemoryType::Project), "z");
    write_entry(&fx.roots.project, "alpha.md", &meta("alpha", "a", MemoryType::Project), "a");
    write_entry(&fx.roots.project, "feedback/tone.md", &meta("tone", "t", MemoryType::Feedback), "t");
    write_entry(&fx.roots.user, "me.md", &meta("me", "m", MemoryType::User), "m");
    write_entry(&shared, "team.md", &meta("team", "t", MemoryType::Reference), "t");
    std::fs::write(fx.roots.project.join("MEMORY.md"), "# index\n").unwrap();
    std::fs::write(fx.roots.project.join("notes.txt"), "not a memory").unwrap();
    std::fs::write(fx.roots.project.join(".hidden.md"), "hidden").unwrap();
    let loaded = load(&fx.roots);
    let ids: Vec<String> = loaded.entries.iter().map(Entry::id).collect();
    assert_eq!(ids, ["user/me", "project/alpha", "project/feedback/tone", "project/zeta", "shared/team"]);
    assert_eq!(loaded.warnings, Vec::<String>::new());
    assert_eq!(loaded.entries[2].path, fx.roots.project.join("feedback/tone.md"));
    assert_eq!(load_scope(&fx.roots, Scope::Shared).entries.len(), 1);
}

#[test]
fn missing_folders_load_nothing_quietly() {
    let fx = Fixture::new();
    assert_eq!(load(&fx.roots), Loaded::default());
}

#[test]
fn broken_frontmatter_is_loaded_with_a_warning() {
    let fx = Fixture::new();
    std::fs::create_dir_all(&fx.roots.project).unwrap();
    std::fs::create_dir_all(&fx.roots.user).unwrap();
    let long = "word ".repeat(60);
    std::fs::write(fx.roots.project.join("plain.md"), format!("\n{long}\nsecond line\n")).unwrap();
    std::fs::write(fx.roots.project.join("bad.md"), "---\nname: [oops\n---\nThe body.\n").unwrap();
    std::fs::write(fx.roots.user.join("open.md"), "---\nname: a\nno end\n").unwrap();
    let loaded = load(&fx.roots);
    assert_eq!(loaded.entries.len(), 3);
    assert_eq!(loaded.warnings.len(), 3, "{:?}", loaded.warnings);
    let open = &loaded.entries[0];
    assert_eq!((open.id().as_str(), open.meta.kind), ("user/open", MemoryType::User));
    assert_eq!(open.meta.description, "name: a");
    let bad = &loaded.entries[1];
    assert_eq!(bad.meta.name, "bad");
    assert_eq!(bad.meta.kind, MemoryType::Project);
    assert_eq!(bad.meta.description, "name: [oops");
    let warning = bad.warning.as_deref().unwrap();
    assert!(
        warning.starts_with(&format!("{}: invalid YAML", fx.roots.project.join("bad.md").display())),
        "{warning}"
    );
    assert!(warning.ends_with("; loaded without its frontmatter"), "{warning}");
    let plain = &loaded.entries[2];
    assert_eq!(plain.meta.description.chars().count(), 120);
    assert!(plain.meta.description.starts_with("word word"));
    assert!(plain.warning.as_deref().unwrap().contains("no YAML frontmatter"));
    assert!(loaded.warnings.iter().any(|w| w == plain.warning.as_deref().unwrap()));
}

#[test]
fn oversized_files_are_refused_with_their_size() {
    let fx = Fixture::new();
    let body = "x".repeat(MAX_ENTRY_BYTES);
    let path = write_entry(&fx.roots.project, "big.md", &meta("big", "b", MemoryType::Project), &body);
    write_entry(&fx.roots.project, "small.md", &meta("small", "s", MemoryType::Project), "s");
    let size = std::fs::metadata(&path).unwrap().len();
    let loaded = load(&fx.roots);
    assert_eq!(loaded.entries.len(), 1);
    assert_eq!(loaded.warnings.len(), 1);
    let warning = &loaded.warnings[0];
    assert!(warning.contains(&path.display().to_string()), "{warning}");
    assert!(warning.contains(&format!("{size} bytes")) && warning.contains("65536"), "{warning}");
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_skipped_with_a_warning() {
    let fx = Fixture::new();
    let outside = fx.base().join("outside");
    write_entry(&outside, "secret.md", &meta("s", "s", MemoryType::Project), "outside");
    write_entry(&fx.roots.project, "real.md", &meta("real", "r", MemoryType::Project), "r");
    std::os::unix::fs::symlink(outside.join("secret.md"), fx.roots.project.join("link.md")).unwrap();
    std::os::unix::fs::symlink(&outside, fx.roots.project.join("dir")).unwrap();
    let loaded = load(&fx.roots);
    let ids: Vec<String> = loaded.entries.iter().map(Entry::id).collect();
    assert_eq!(ids, ["project/real"]);
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(loaded.warnings.iter().all(|w| w.contains("symbolic link")));
}

#[cfg(unix)]
#[test]
fn an_unreadable_folder_warns_and_the_rest_loads() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    write_entry(&fx.roots.project, "ok.md", &meta("ok", "o", MemoryType::Project), "o");
    let locked = fx.roots.project.join("locked");
    write_entry(&locked, "x.md", &meta("x", "x", MemoryType::Project), "x");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readable_anyway = std::fs::read_dir(&locked).is_ok(); // root ignores permissions
    let loaded = load(&fx.roots);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    if readable_anyway {
        return;
    }
    assert_eq!(loaded.entries.len(), 1);
    assert!(loaded.warnings[0].contains("cannot read this memory folder"), "{:?}", loaded.warnings);
}

fn thousand(fx: &Fixture) {
    for i in 0..1000 {
        let body = format!(
            "Entry {i} about the build: run cargo test -p crate{i} before pushing; {}",
            "x".repeat(120)
        );
        write_entry(
            &fx.roots.project,
            &format!("e{i:04}.md"),
            &meta(&format!("e{i}"), "a note", MemoryType::Project),
            &body,
        );
    }
}

#[test]
fn loads_a_thousand_entries() {
    let fx = Fixture::new();
    thousand(&fx);
    let loaded = load(&fx.roots);
    assert_eq!(loaded.entries.len(), 1000);
    assert!(loaded.warnings.is_empty());
    assert_eq!(loaded.entries[999].id(), "project/e0999");
}

#[test]
fn an_expiry_that_is_not_a_date_is_warned_about() {
    let fx = Fixture::new();
    let mut entry = meta("sprint", "sprint goal", MemoryType::Project);
    entry.expires = Some("not-a-date".to_string());
    write_entry(&fx.roots.user, "sprint.md", &entry, "Ship it.");
    let loaded = load(&fx.roots);
    assert_eq!(loaded.entries.len(), 1);
    assert!(
        loaded.warnings.iter().any(|warning| warning.contains("`expires: not-a-date` is not a date")),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_name_with_control_characters_is_skipped_with_a_clean_warning() {
    let fx = Fixture::new();
    write_entry(&fx.roots.user, "e\u{1b}]0;x\u{7}.md", &meta("e", "escape", MemoryType::User), "body");
    write_entry(&fx.roots.user, "zw\u{200b}.md", &meta("zw", "zero width", MemoryType::User), "body");
    write_entry(&fx.roots.user, "ok.md", &meta("ok", "fine", MemoryType::User), "body");
    let loaded = load(&fx.roots);
    assert_eq!(loaded.entries.iter().map(|entry| entry.file.as_str()).collect::<Vec<_>>(), ["ok.md"]);
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(
        loaded
            .warnings
            .iter()
            .all(|warning| warning.contains("rename the file") && !warning.contains('\u{1b}'))
    );
}
