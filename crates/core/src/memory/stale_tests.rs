#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;
use crate::memory::test_support::git;

#[test]
fn blob_ids_match_git_hash_object() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("a.txt", &b"hello\n"[..]), ("empty", b""), ("bin", b"\0\xff\r\nx")] {
        std::fs::write(dir.path().join(name), bytes).unwrap();
        let expected = git(dir.path(), &["hash-object", "--no-filters", name]);
        assert_eq!(git_blob_id(bytes), expected.trim(), "{name}");
    }
    assert_eq!(git_blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

#[test]
fn evidence_goes_stale_when_its_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/x.rs"), "fn x() {}\n").unwrap();
    std::fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
    let evidence =
        fill_evidence(root, &["src/x.rs".to_string(), "Cargo.toml".to_string(), "gone.rs".to_string()]);
    assert_eq!(evidence[0], format!("src/x.rs@{}", git_blob_id(b"fn x() {}\n")));
    assert_eq!(evidence[2], "gone.rs", "a missing file stays bare");
    assert_eq!(stale_evidence(root, &evidence), Vec::<String>::new());
    std::fs::write(root.join("src/x.rs"), "fn x() { changed() }\n").unwrap();
    assert_eq!(stale_evidence(root, &evidence), ["src/x.rs"]);
    std::fs::remove_file(root.join("Cargo.toml")).unwrap();
    assert_eq!(stale_evidence(root, &evidence), ["src/x.rs", "Cargo.toml"]);
    assert_eq!(fill_evidence(root, &evidence), evidence, "pinned entries are kept");
}

#[test]
fn evidence_stays_inside_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(dir.path().join("outside.txt"), "x").unwrap();
    for path in ["../outside.txt", "/etc/passwd", "./a", "a\\b", ""] {
        assert!(check_path(path).is_err(), "{path}");
        assert_eq!(fill_evidence(&root, &[path.to_string()]), [path.to_string()]);
    }
    let pinned = format!("../outside.txt@{}", git_blob_id(b"x"));
    assert_eq!(stale_evidence(&root, &[pinned]), Vec::<String>::new(), "never read");
    assert!(check_path("src/lib.rs").is_ok());
}

#[cfg(unix)]
#[test]
fn evidence_through_a_symbolic_link_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(dir.path().join("outside.txt"), "x").unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside.txt"), root.join("link.txt")).unwrap();
    assert_eq!(fill_evidence(&root, &["link.txt".to_string()]), ["link.txt"]);
}
