#![allow(clippy::expect_used)]

use super::*;

#[test]
fn a_linked_worktree_writes_its_own_git_dir_and_the_common_objects_refs_and_logs() {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().canonicalize().expect("canonical");
    let common = root.join("main/.git");
    let own = common.join("worktrees/feat");
    std::fs::create_dir_all(&own).expect("git dirs");
    std::fs::write(own.join("commondir"), "../..\n").expect("commondir");
    std::fs::create_dir_all(root.join("feat")).expect("worktree");
    std::fs::write(root.join("feat/.git"), format!("gitdir: {}\n", own.display())).expect(".git");
    let access = access(&root.join("feat"));
    assert_eq!(
        access.writable,
        vec![own.clone(), common.join("objects"), common.join("refs"), common.join("logs")]
    );
    assert!(
        access.read_only.contains(&own.join("commondir")) && access.read_only.contains(&own.join("gitdir"))
    );
    assert!(!access.writable.contains(&common), "the common dir's config and hooks stay read-only");
}

#[test]
fn a_repository_binds_its_git_dir_and_keeps_hooks_and_config_read_only() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::create_dir_all(dir.path().join(".git")).expect(".git");
    let access = access(dir.path());
    assert_eq!(access.writable, vec![dir.path().join(".git")]);
    for name in ["hooks", "config", "modules", "commondir"] {
        assert!(access.read_only.contains(&dir.path().join(".git").join(name)), "{name}");
    }
    assert_eq!(super::access(&dir.path().join("nothing")), GitAccess::default());
}

#[test]
fn settle_removes_planted_names_and_links_and_keeps_what_git_writes() {
    let dir = tempfile::tempdir().expect("dir");
    let git = dir.path().join(".git");
    std::fs::create_dir_all(git.join("refs/heads")).expect("refs");
    std::fs::create_dir_all(git.join("logs")).expect("logs");
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    let watch = GitWatch::new(std::slice::from_ref(&git));
    // What a commit writes.
    std::fs::write(git.join("index"), "i").expect("index");
    std::fs::write(git.join("COMMIT_EDITMSG"), "m").expect("msg");
    std::fs::write(git.join("ORIG_HEAD"), "o").expect("orig");
    std::fs::write(git.join("refs/heads/main"), "sha").expect("ref");
    // What would redirect git or write through a link outside the sandbox later.
    std::fs::write(git.join("commondir"), "/tmp/evil\n").expect("commondir");
    std::fs::create_dir_all(git.join("modules/x")).expect("modules");
    std::os::unix::fs::symlink("/etc/passwd", git.join("logs/HEAD")).expect("link");
    std::os::unix::fs::symlink("/etc/passwd", git.join("MERGE_MSG")).expect("link");
    let removed = watch.settle();
    for planted in ["commondir", "modules", "logs/HEAD", "MERGE_MSG"] {
        assert!(!git.join(planted).exists() && git.join(planted).symlink_metadata().is_err(), "{planted}");
        assert!(removed.iter().any(|r| r.ends_with(planted)), "{planted}: {removed:?}");
    }
    for kept in ["index", "COMMIT_EDITMSG", "ORIG_HEAD", "refs/heads/main", "HEAD"] {
        assert!(git.join(kept).is_file(), "{kept}");
    }
    assert_eq!(removed.len(), 4, "{removed:?}");
}
