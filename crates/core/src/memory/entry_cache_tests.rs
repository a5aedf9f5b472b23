#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, SystemTime};

use pretty_assertions::assert_eq;

use super::*;
use crate::memory::store::{self, Caching, Loaded};
use crate::memory::test_support::{Fixture, meta, write_entry};

/// A load through the records kept in `cache`, judging recency against `now`, written at once.
fn load_at(fx: &Fixture, cache: &Path, now: SystemTime) -> Loaded {
    store::load_with(&fx.roots, Some(Caching { dir: cache, now, background: false }))
}

fn later() -> SystemTime {
    SystemTime::now() + Duration::from_secs(60)
}

fn record(fx: &Fixture, cache: &Path) -> EntryCache {
    EntryCache::load(cache, &fx.roots.user)
}

fn stamp(path: &Path) -> Stamp {
    Stamp::of(&fs::symlink_metadata(path).unwrap())
}

fn user_entries(fx: &Fixture) {
    write_entry(
        &fx.roots.user,
        "pnpm.md",
        &meta("pnpm", "We use pnpm", MemoryType::Project),
        "pnpm, not npm",
    );
    write_entry(
        &fx.roots.user,
        "deep/tone.md",
        &meta("tone", "Short answers", MemoryType::Feedback),
        "be brief",
    );
    // Broken frontmatter: loaded with a fallback and a warning, which the record keeps too.
    fs::write(fx.roots.user.join("broken.md"), "---\nname: [unclosed\n---\nbody text\n").unwrap();
    let mut expiring = meta("old", "An old fact", MemoryType::Reference);
    expiring.expires = Some("soon".into());
    expiring.evidence = vec!["src/a.rs@0123456789abcdef0123456789abcdef01234567".into()];
    expiring.last_used = Some("2025-06-01T12:00:00Z".into());
    write_entry(&fx.roots.user, "old.md", &expiring, "old body");
}

#[test]
fn a_load_through_the_record_is_the_load_from_disk() {
    let fx = Fixture::new();
    let cache = fx.base().join("cache");
    user_entries(&fx);
    let fresh = store::load(&fx.roots);
    assert_eq!(fresh.entries.len(), 4);
    assert!(!fresh.warnings.is_empty(), "the broken entry and the bad expiry are named");
    assert_eq!(load_at(&fx, &cache, later()), fresh, "first load: read from disk, recorded");
    let recorded = record(&fx, &cache);
    assert_eq!(recorded.len(), 4);
    // Every entry now comes from the record: the recorded one is returned for the file's stamp.
    let path = fx.roots.user.join("deep/tone.md");
    let from_record = recorded.get(Scope::User, "deep/tone.md", &path, stamp(&path)).unwrap();
    assert_eq!(from_record, fresh.entries.iter().find(|e| e.file == "deep/tone.md").unwrap().clone());
    assert_eq!(load_at(&fx, &cache, later()), fresh, "second load: from the record");
}

#[test]
fn a_rewrite_of_the_same_size_with_its_old_mtime_is_read_again() {
    let fx = Fixture::new();
    let cache = fx.base().join("cache");
    user_entries(&fx);
    load_at(&fx, &cache, later());
    let path = fx.roots.user.join("pnpm.md");
    let before = fs::metadata(&path).unwrap().modified().unwrap();
    let text = fs::read_to_string(&path).unwrap().replace("pnpm, not npm", "yarn, not npm");
    // The change time moves on with the kernel's clock tick (a few ms at most).
    std::thread::sleep(Duration::from_millis(30));
    fs::write(&path, &text).unwrap();
    fs::File::options().write(true).open(&path).unwrap().set_modified(before).unwrap();
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), before, "same mtime");
    let loaded = load_at(&fx, &cache, later());
    assert_eq!(loaded, store::load(&fx.roots));
    assert!(loaded.entries.iter().any(|e| e.body == "yarn, not npm"));
}

#[test]
fn a_file_replaced_by_another_is_read_again() {
    let fx = Fixture::new();
    let cache = fx.base().join("cache");
    user_entries(&fx);
    load_at(&fx, &cache, later());
    let path = fx.roots.user.join("pnpm.md");
    let text = fs::read_to_string(&path).unwrap().replace("pnpm, not npm", "bun, not npm");
    let other = fx.roots.user.join("swap.tmp");
    fs::write(&other, text).unwrap();
    fs::rename(&other, &path).unwrap();
    let loaded = load_at(&fx, &cache, later());
    assert!(loaded.entries.iter().any(|e| e.body == "bun, not npm"));
    assert_eq!(loaded, store::load(&fx.roots));
}

#[test]
fn recent_changes_are_not_recorded() {
    let fx = Fixture::new();
    let cache = fx.base().join("cache");
    user_entries(&fx);
    // Judged against the real clock the files were written this instant: racily clean.
    assert_eq!(load_at(&fx, &cache, SystemTime::now()), store::load(&fx.roots));
    assert_eq!(record(&fx, &cache).len(), 0);
    load_at(&fx, &cache, later());
    assert_eq!(record(&fx, &cache).len(), 4);
    // A file changed since is dropped from the record until it is older.
    write_entry(&fx.roots.user, "pnpm.md", &meta("pnpm", "We use pnpm 9", MemoryType::Project), "pnpm 9");
    let loaded = load_at(&fx, &cache, SystemTime::now());
    assert!(loaded.entries.iter().any(|e| e.body == "pnpm 9"));
    let path = fx.roots.user.join("pnpm.md");
    assert!(record(&fx, &cache).get(Scope::User, "pnpm.md", &path, stamp(&path)).is_none());
    // Once it is older, it is recorded as it is now.
    load_at(&fx, &cache, later());
    let recorded = record(&fx, &cache).get(Scope::User, "pnpm.md", &path, stamp(&path)).unwrap();
    assert_eq!(recorded.body, "pnpm 9");
}

#[test]
fn added_and_removed_files_follow_the_folder() {
    let fx = Fixture::new();
    let cache = fx.base().join("cache");
    user_entries(&fx);
    load_at(&fx, &cache, later());
    fs::remove_file(fx.roots.user.join("old.md")).unwrap();
    write_entry(&fx.roots.user, "new.md", &meta("new", "A new fact", MemoryType::User), "new");
    let loaded = load_at(&fx, &cache, later());
    assert_eq!(loaded, store::load(&fx.roots));
    let files: Vec<&str> = loaded.entries.iter().map(|e| e.file.as_str()).collect();
    assert_eq!(files, ["broken.md", "deep/tone.md", "new.md", "pnpm.md"]);
    assert_eq!(record(&fx, &cache).len(), 4);
}

#[test]
fn a_broken_or_foreign_record_is_ignored() {
    let fx = Fixture::new();
    let cache = fx.base().join("cache");
    user_entries(&fx);
    load_at(&fx, &cache, later());
    let dir = cache.join("memory-entries");
    let file = fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let bytes = fs::read(&file).unwrap();
    fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(record(&fx, &cache).len(), 0, "a cut record is not read");
    assert_eq!(load_at(&fx, &cache, later()), store::load(&fx.roots));
    let mut other = record(&fx, &cache);
    assert_eq!(other.len(), 4, "rewritten whole");
    other.record.version = "0.0.0-other".into();
    write(&file, &other.record).unwrap();
    assert_eq!(record(&fx, &cache).len(), 0, "another version's record is not used");
}

#[test]
fn an_unusable_cache_folder_costs_only_time() {
    let fx = Fixture::new();
    let cache = fx.base().join("cache");
    fs::write(&cache, "a file where the cache folder should be").unwrap();
    user_entries(&fx);
    assert_eq!(load_at(&fx, &cache, later()), store::load(&fx.roots));
    assert_eq!(load_at(&fx, &cache, later()), store::load(&fx.roots));
    assert_eq!(record(&fx, &cache).len(), 0);
}

#[test]
fn a_forgotten_entry_leaves_no_copy_in_the_record() {
    let fx = Fixture::new();
    // The cache folder next to the user scope's folder, where `refresh_records` looks.
    let cache = fx.roots.user.parent().unwrap().join("cache");
    user_entries(&fx);
    load_at(&fx, &cache, later());
    let holds = |text: &str| {
        fs::read_dir(cache.join("memory-entries"))
            .unwrap()
            .any(|file| String::from_utf8_lossy(&fs::read(file.unwrap().path()).unwrap()).contains(text))
    };
    assert!(holds("pnpm, not npm"));
    crate::memory::manage::forget(&fx.roots, "user/pnpm").unwrap();
    assert!(!holds("pnpm, not npm"), "the record was rewritten without it");
}
