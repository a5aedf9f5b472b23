#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::test_support::git;
use super::*;

#[test]
fn scope_names_are_stable() {
    assert_eq!(Scope::ALL.map(Scope::as_str), ["user", "project", "shared"]);
    assert_eq!(Scope::Project.to_string(), "project");
    assert_eq!(Scope::from_name("shared"), Some(Scope::Shared));
    assert_eq!(Scope::from_name("etc"), None);
}

#[test]
fn roots_in_a_repository_have_a_shared_scope() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    git(&repo, &["init", "-q"]);
    let home = dir.path().join("home");
    let roots = Roots::for_workspace(&home, &repo.join("src/deep"));
    assert_eq!(roots.user, home.join("memory"));
    assert_eq!(roots.project, home.join("projects").join(repo_key(&repo)).join("memory"));
    assert_eq!(roots.shared, Some(repo.join(".lathe/memory")));
    assert_eq!(roots.root(Scope::Shared), Some(repo.join(".lathe/memory").as_path()));
    assert_eq!(repo_key(&repo.join("src/deep")), repo_key(&repo));
}

#[test]
fn roots_outside_a_repository_use_the_folder_itself() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().canonicalize().unwrap().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let roots = Roots::for_workspace(dir.path(), &plain);
    // A temporary folder is not inside a repository (unless the machine's /tmp is).
    if repo_root(&plain).is_none() {
        assert_eq!(roots.shared, None);
        assert_eq!(roots.root(Scope::Shared), None);
        assert_eq!(repo_key(&plain), crate::paths::project_key(&plain));
    }
}

#[test]
fn worktrees_of_one_repository_share_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let main = base.join("main");
    let other = base.join("other");
    std::fs::create_dir_all(&main).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    git(&main, &["init", "-q"]);
    std::fs::write(main.join("a.txt"), "a\n").unwrap();
    git(&main, &["add", "a.txt"]);
    git(&main, &["commit", "-q", "-m", "first"]);
    git(&main, &["worktree", "add", "-q", "../wt", "-b", "feature"]);
    git(&other, &["init", "-q"]);
    let worktree = base.join("wt");
    assert!(worktree.join(".git").is_file(), "a linked worktree has a `gitdir:` file");
    assert_eq!(repo_key(&worktree), repo_key(&main));
    assert_ne!(repo_key(&other), repo_key(&main));
    let home = base.join("home");
    assert_eq!(Roots::for_workspace(&home, &worktree).project, Roots::for_workspace(&home, &main).project);
    assert_eq!(Roots::for_workspace(&home, &worktree).shared, Some(worktree.join(".lathe/memory")));
}

#[test]
fn a_git_file_naming_another_repository_does_not_share_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let victim = base.join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    git(&victim, &["init", "-q"]);
    let planted = base.join("download");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::write(planted.join(".git"), format!("gitdir: {}\n", victim.join(".git").display())).unwrap();
    assert_ne!(repo_key(&planted), repo_key(&victim), "a .git file the repository does not claim");
    assert_eq!(repo_key(&planted), crate::paths::project_key(&planted));

    // A submodule's .git file is claimed by core.worktree in its git dir.
    std::fs::write(victim.join("a.txt"), "a\n").unwrap();
    git(&victim, &["add", "a.txt"]);
    git(&victim, &["commit", "-q", "-m", "first"]);
    let sub_git = victim.join(".git/modules/sub");
    std::fs::create_dir_all(&sub_git).unwrap();
    std::fs::write(sub_git.join("config"), "[core]\n\tworktree = ../../../sub\n").unwrap();
    let sub = victim.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join(".git"), "gitdir: ../.git/modules/sub\n").unwrap();
    assert_eq!(repo_key(&sub), crate::paths::project_key(&sub_git));
}
