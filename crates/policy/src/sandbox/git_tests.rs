#![allow(clippy::expect_used)]

use super::*;

/// A main checkout at `<root>/main` and its linked worktree `<root>/feat`, laid out as
/// `git worktree add` lays them out.
fn worktree(root: &Path) -> (PathBuf, PathBuf) {
    let common = root.join("main/.git");
    let own = common.join("worktrees/feat");
    for dir in
        [own.clone(), common.join("objects"), common.join("refs"), common.join("logs"), root.join("feat")]
    {
        std::fs::create_dir_all(dir).expect("dirs");
    }
    std::fs::write(own.join("commondir"), "../..\n").expect("commondir");
    std::fs::write(own.join("gitdir"), format!("{}\n", root.join("feat/.git").display())).expect("gitdir");
    std::fs::write(root.join("feat/.git"), format!("gitdir: {}\n", own.display())).expect(".git");
    (common, own)
}

#[test]
fn a_linked_worktree_writes_its_own_git_dir_and_the_common_objects_refs_and_logs() {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().canonicalize().expect("canonical");
    let (common, own) = worktree(&root);
    let access = access(&root.join("feat"), &[]);
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
fn a_git_file_a_command_could_have_planted_widens_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().canonicalize().expect("canonical");
    let (_, own) = worktree(&root);
    // Another workspace pointing at feat's git dir: the back-pointer names feat, not it.
    std::fs::create_dir_all(root.join("other")).expect("other");
    std::fs::write(root.join("other/.git"), format!("gitdir: {}\n", own.display())).expect(".git");
    assert_eq!(access(&root.join("other"), &[]), GitAccess::default());
    // A git dir inside the workspace, whose commondir names another repository.
    std::fs::create_dir_all(root.join("ws/fake")).expect("fake");
    std::fs::write(root.join("ws/fake/commondir"), format!("{}\n", root.join("main/.git").display()))
        .expect("cd");
    std::fs::write(root.join("ws/.git"), "gitdir: fake\n").expect(".git");
    assert_eq!(access(&root.join("ws"), &[]), GitAccess::default());
    // A linked .git.
    std::fs::create_dir_all(root.join("ws2")).expect("ws2");
    std::os::unix::fs::symlink(root.join("main/.git"), root.join("ws2/.git")).expect("link");
    assert_eq!(access(&root.join("ws2"), &[]), GitAccess::default());
}

#[test]
fn a_repository_binds_its_git_dir_objects_and_refs_and_keeps_hooks_and_config_read_only() {
    let dir = tempfile::tempdir().expect("dir");
    let git = dir.path().join(".git");
    std::fs::create_dir_all(git.join("objects")).expect("objects");
    std::fs::create_dir_all(git.join("refs")).expect("refs");
    let access = access(dir.path(), &[]);
    assert_eq!(access.writable, vec![git.clone(), git.join("objects"), git.join("refs")]);
    for name in ["hooks", "config", "modules", "commondir"] {
        assert!(access.read_only.contains(&git.join(name)), "{name}");
    }
    assert_eq!(super::access(&dir.path().join("nothing"), &[]), GitAccess::default());
}

#[test]
fn settle_undoes_what_was_planted_and_keeps_what_git_writes() {
    let dir = tempfile::tempdir().expect("dir");
    let ws = dir.path();
    let git = ws.join(".git");
    std::fs::create_dir_all(git.join("refs/heads")).expect("refs");
    std::fs::create_dir_all(git.join("logs")).expect("logs");
    std::fs::create_dir_all(git.join("objects/ab")).expect("objects");
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    let access = access(ws, &[]);
    let watch = GitWatch::new(&access.watched, &[ws.join(".claude"), ws.join(".lathe")]);
    // What a commit or a stash writes.
    std::fs::write(git.join("index"), "i").expect("index");
    std::fs::write(git.join("COMMIT_EDITMSG"), "m").expect("msg");
    std::fs::write(git.join("ORIG_HEAD"), "o").expect("orig");
    std::fs::write(git.join("refs/heads/main"), "sha").expect("ref");
    std::fs::write(git.join("refs/stash"), "sha").expect("stash");
    std::fs::write(git.join("objects/ab/cdef"), "obj").expect("object");
    // What would redirect git, write through a link, or run in the next session.
    std::fs::write(git.join("commondir"), "/tmp/evil\n").expect("commondir");
    std::fs::create_dir_all(git.join("modules/x")).expect("modules");
    std::os::unix::fs::symlink("/etc", git.join("logs/HEAD")).expect("link");
    std::os::unix::fs::symlink("/etc", git.join("MERGE_MSG")).expect("link");
    std::os::unix::fs::symlink("/etc", git.join("objects/cd")).expect("link");
    std::fs::create_dir_all(ws.join(".claude")).expect(".claude");
    std::fs::write(ws.join(".claude/settings.json"), "{}").expect("settings");
    std::fs::write(git.join("HEAD"), "garbage\n").expect("HEAD");
    let undone = watch.settle();
    for planted in ["commondir", "modules", "logs/HEAD", "MERGE_MSG", "objects/cd"] {
        assert!(git.join(planted).symlink_metadata().is_err(), "{planted}");
        assert!(undone.iter().any(|r| r.ends_with(planted)), "{planted}: {undone:?}");
    }
    assert!(!ws.join(".claude").exists(), "{undone:?}");
    assert_eq!(std::fs::read_to_string(git.join("HEAD")).expect("HEAD"), "ref: refs/heads/main\n");
    for kept in ["index", "COMMIT_EDITMSG", "ORIG_HEAD", "refs/heads/main", "refs/stash", "objects/ab/cdef"] {
        assert!(git.join(kept).is_file(), "{kept}");
    }
    assert_eq!(undone.len(), 7, "{undone:?}");
}

#[test]
fn a_new_ref_dir_in_a_worktrees_common_refs_is_kept() {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().canonicalize().expect("canonical");
    let (common, own) = worktree(&root);
    std::fs::write(own.join("HEAD"), "ref: refs/heads/feat\n").expect("HEAD");
    let watch = GitWatch::new(&access(&root.join("feat"), &[]).watched, &[]);
    std::fs::write(common.join("refs/stash"), "sha").expect("stash");
    std::fs::create_dir_all(common.join("refs/notes")).expect("notes");
    assert_eq!(watch.settle(), Vec::<String>::new());
    assert!(common.join("refs/stash").is_file() && common.join("refs/notes").is_dir());
}

#[test]
fn settle_restores_a_head_made_a_directory_permissions_and_a_replaced_settings_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("dir");
    let ws = dir.path();
    let git = ws.join(".git");
    for sub in ["refs/heads", "objects", "logs"] {
        std::fs::create_dir_all(git.join(sub)).expect("dirs");
    }
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::fs::create_dir_all(ws.join("shared/claude")).expect("shared");
    std::os::unix::fs::symlink("shared/claude", ws.join(".claude")).expect("link");
    let watch = GitWatch::new(&access(ws, &[]).watched, &[ws.join(".claude"), ws.join(".mcp.json")]);
    std::fs::remove_file(git.join("HEAD")).expect("rm HEAD");
    std::fs::create_dir(git.join("HEAD")).expect("HEAD dir");
    std::fs::set_permissions(git.join("objects"), std::fs::Permissions::from_mode(0o000)).expect("chmod");
    std::fs::remove_file(ws.join(".claude")).expect("rm link");
    std::fs::create_dir_all(ws.join(".claude")).expect("dir");
    std::fs::write(ws.join(".mcp.json"), "{}").expect("mcp");
    let undone = watch.settle();
    assert_eq!(
        std::fs::read_to_string(git.join("HEAD")).expect("HEAD"),
        "ref: refs/heads/main\n",
        "{undone:?}"
    );
    let mode = std::fs::metadata(git.join("objects")).expect("objects").permissions().mode() & 0o777;
    assert_ne!(mode, 0, "{undone:?}");
    assert_eq!(std::fs::read_link(ws.join(".claude")).expect("link"), PathBuf::from("shared/claude"));
    assert!(!ws.join(".mcp.json").exists(), "{undone:?}");
}

#[test]
fn a_git_dir_of_the_repository_in_a_writable_root_outside_the_workspace_is_shielded() {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().canonicalize().expect("canonical");
    let (common, _) = worktree(&root);
    // A worktree whose main checkout lies in a writable root (a temp dir).
    assert_eq!(access(&root.join("feat"), &[root.join("feat"), root.clone()]).shield, vec![common.clone()]);
    // A workspace below a repository's top, the repository in a writable root.
    std::fs::create_dir_all(root.join("main/pkg")).expect("pkg");
    assert_eq!(access(&root.join("main/pkg"), &[root.join("main/pkg"), root.clone()]).shield, vec![common]);
    assert_eq!(access(&root.join("main/pkg"), &[root.join("main/pkg")]).shield, Vec::<PathBuf>::new());
}

#[test]
fn a_separate_git_dir_or_a_worktrees_subdirectory_in_a_writable_root_is_shielded() {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().canonicalize().expect("canonical");
    let (common, own) = worktree(&root);
    // A subdirectory of the linked worktree: its `.git` file names the own git dir and the common dir.
    std::fs::create_dir_all(root.join("feat/pkg")).expect("pkg");
    let shield = access(&root.join("feat/pkg"), &[root.join("feat/pkg"), root.clone()]).shield;
    assert_eq!(shield, vec![own, common]);
    // `git init --separate-git-dir`: a `.git` file naming a plain git dir.
    std::fs::create_dir_all(root.join("sgd/objects")).expect("sgd");
    std::fs::create_dir_all(root.join("sgdws")).expect("ws");
    std::fs::write(root.join("sgdws/.git"), format!("gitdir: {}\n", root.join("sgd").display()))
        .expect(".git");
    let access = access(&root.join("sgdws"), &[root.join("sgdws"), root.clone()]);
    assert_eq!(access.shield, vec![root.join("sgd")]);
    assert!(access.writable.is_empty());
}

#[test]
fn settle_removes_a_fifo_in_the_git_dir() {
    let dir = tempfile::tempdir().expect("dir");
    let git = dir.path().join(".git");
    std::fs::create_dir_all(git.join("refs")).expect("refs");
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::fs::write(git.join("sharedindex.0123"), "x").expect("shared");
    let watch = GitWatch::new(&access(dir.path(), &[]).watched, &[]);
    std::fs::remove_file(git.join("sharedindex.0123")).expect("rm");
    let made =
        std::process::Command::new("mkfifo").arg(git.join("sharedindex.0123")).status().expect("mkfifo");
    assert!(made.success());
    let undone = watch.settle();
    assert!(git.join("sharedindex.0123").symlink_metadata().is_err(), "{undone:?}");
}
