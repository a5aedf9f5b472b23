#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;

use super::*;

struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
}

/// base/root (the workspace) and base/outside, with `outside/secret.txt` and `outside/dir/`.
fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("secret.txt"), "s").unwrap();
    Tree { _dir: dir, base, root, outside }
}

/// A guard whose only root is the workspace (the temp dirs would contain the test's own temp dir).
fn guard(tree: &Tree) -> Guard {
    let mut guard = Guard::new(&tree.root, &[], Some(&tree.base.join("home")), &[]);
    guard.temp_dirs.clear();
    guard
}

#[test]
fn symlinks_and_dotdot_are_resolved_before_the_check() {
    let t = tree();
    symlink(&t.outside, t.root.join("out")).unwrap();
    symlink(t.outside.join("secret.txt"), t.root.join("file-link")).unwrap();
    symlink(t.outside.join("missing.txt"), t.root.join("dangling")).unwrap();
    symlink(t.root.join("chain2"), t.root.join("chain1")).unwrap();
    symlink(t.outside.join("dir"), t.root.join("chain2")).unwrap();
    symlink(t.root.join("src"), t.root.join("inner")).unwrap();
    let table = [
        (t.root.join("src/new.rs"), true),
        (t.root.join("a/b/c.txt"), true),
        (t.root.join("out/escape.txt"), false),
        (t.root.join("file-link"), false),
        (t.root.join("dangling"), false),
        (t.root.join("chain1/x.txt"), false),
        (t.root.join("inner/y.txt"), true),
        (t.base.join("elsewhere.txt"), false),
        (t.root.join("src/../../x.txt"), false),
        (t.root.join("src/.."), true),
        (t.root.join(".."), false),
        (t.root.join("new/.."), true),
        (t.root.join("out/.."), false),
        (PathBuf::from("/etc/passwd"), false),
    ];
    let g = guard(&t);
    for (path, inside) in table {
        assert_eq!(is_inside(&t.root, &path), inside, "is_inside {}", path.display());
        let check = g.check_write(&path);
        assert_eq!(
            matches!(check, PathCheck::Inside(_)),
            inside,
            "check_write {}: {check:?}",
            path.display()
        );
    }
}

#[test]
fn a_dangling_symlink_resolves_to_its_target() {
    let t = tree();
    symlink(t.outside.join("new.txt"), t.root.join("dangling")).unwrap();
    assert_eq!(real_path(&t.root.join("dangling")), t.outside.join("new.txt"));
    symlink("loop-b", t.root.join("loop-a")).unwrap();
    symlink("loop-a", t.root.join("loop-b")).unwrap();
    // A loop ends (the kernel would refuse it with ELOOP).
    let _ = real_path(&t.root.join("loop-a/x"));
}

#[test]
fn git_internals_and_settings_files_are_never_written() {
    let t = tree();
    let settings = t.root.join(".lathe/settings.json");
    let mut g = Guard::new(&t.root, &[], None, std::slice::from_ref(&settings));
    g.temp_dirs.clear();
    for path in [t.root.join(".git/config"), t.root.join("sub/.git/hooks/pre-commit"), settings.clone()] {
        assert!(matches!(g.check_write(&path), PathCheck::Sensitive(..)), "{}", path.display());
    }
    symlink(&settings, t.root.join("innocent.json")).unwrap();
    assert!(matches!(g.check_write(&t.root.join("innocent.json")), PathCheck::Sensitive(..)));
    assert!(matches!(g.check_write(&t.root.join("src/.gitignore")), PathCheck::Inside(_)));
}

#[test]
fn secrets_ask_even_inside_the_workspace() {
    let t = tree();
    let g = guard(&t);
    let home = t.base.join("home");
    for path in [
        t.root.join(".env"),
        t.root.join("config/.env.production"),
        t.root.join("certs/server.pem"),
        t.root.join("tls.key"),
        t.root.join("id_rsa.pub"),
        home.join(".ssh/config"),
        home.join(".aws/credentials"),
    ] {
        assert!(matches!(g.check_read(&path), PathCheck::Sensitive(..)), "{}", path.display());
    }
    assert!(matches!(g.check_read(&t.root.join("src/main.rs")), PathCheck::Inside(_)));
    assert!(matches!(g.check_read(&t.outside.join("secret.txt")), PathCheck::Outside(_)));
    symlink(t.outside.join("secret.txt"), t.root.join("link.txt")).unwrap();
    assert!(matches!(g.check_read(&t.root.join("link.txt")), PathCheck::Outside(_)));
    symlink(t.root.join(".env"), t.root.join("harmless.txt")).unwrap();
    assert!(matches!(g.check_read(&t.root.join("harmless.txt")), PathCheck::Sensitive(..)));
}
