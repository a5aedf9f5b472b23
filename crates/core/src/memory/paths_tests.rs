#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;
use crate::memory::test_support::Fixture;

#[test]
fn good_paths_resolve_under_their_scope() {
    let fx = Fixture::new();
    for (path, scope, file) in [
        ("/memories/project/pnpm.md", Scope::Project, "pnpm.md"),
        ("memories/user/editor.md", Scope::User, "editor.md"),
        ("/memories//project///feedback//tone.md", Scope::Project, "feedback/tone.md"),
    ] {
        let target = resolve(&fx.roots, path).unwrap();
        assert_eq!((target.scope, target.file.as_str()), (scope, file), "{path}");
        assert_eq!(target.path, fx.roots.root(scope).unwrap().join(file));
    }
    let shared = resolve_file(&fx.roots, "/memories/shared/team.md", Access::Read).unwrap();
    assert_eq!(shared.path, fx.roots.shared.clone().unwrap().join("team.md"));
    assert_eq!(shared.id(), "shared/team");
    assert_eq!(shared.virtual_path(), "/memories/shared/team.md");
}

#[test]
fn hostile_paths_are_refused() {
    let fx = Fixture::new();
    let table: &[(&str, &str)] = &[
        ("/memories/../../x", "`..`"),
        ("/memories/project/../../x.md", "`..`"),
        ("/memories/project/./x.md", "`.`"),
        ("/etc/passwd", "outside memory"),
        ("/tmp/x.md", "outside memory"),
        ("../memories/project/x.md", "outside memory"),
        ("/memoriesx/project/a.md", "outside memory"),
        ("", "outside memory"),
        ("/memories/other/a.md", "not a scope"),
        ("/memories/project/MEMORY.md", "MEMORY.md is the index"),
        ("/memories/user/memory.md", "MEMORY.md is the index"),
        ("/memories/project/x.txt", "end in .md"),
        ("/memories/project/.md", "hidden"),
        ("/memories/project/", "names a folder"),
        ("/memories/project/a\\b.md", "backslash"),
        ("/memories/project/a\0.md", "NUL"),
        ("/memories/project/a\n.md", "control"),
        ("/memories/project/.git/x.md", "hidden"),
        ("/memories/project/ /a.md", "empty component"),
    ];
    for (path, reason) in table {
        let error = resolve(&fx.roots, path).unwrap_err();
        assert!(matches!(error, MemoryError::InvalidPath { .. }), "{path}: {error}");
        assert!(error.to_string().contains(reason), "{path}: {error}");
    }
    let long = format!("/memories/project/{}.md", "a".repeat(300));
    assert!(resolve(&fx.roots, &long).unwrap_err().to_string().contains("longer than"));
}

#[test]
fn the_shared_scope_is_read_only() {
    let fx = Fixture::new();
    let error = resolve(&fx.roots, "/memories/shared/team.md").unwrap_err();
    assert!(matches!(error, MemoryError::ReadOnly { .. }), "{error}");
    assert!(error.to_string().contains("lathe memory promote"), "{error}");
    let outside = Roots { shared: None, ..fx.roots.clone() };
    let error = resolve_file(&outside, "/memories/shared/team.md", Access::Read).unwrap_err();
    assert!(matches!(error, MemoryError::NoSharedScope), "{error}");
}

#[test]
fn the_index_is_readable_but_not_writable() {
    let fx = Fixture::new();
    let index = resolve_file(&fx.roots, "/memories/project/MEMORY.md", Access::Read).unwrap();
    assert_eq!(index.path, fx.roots.project.join("MEMORY.md"));
    assert!(resolve_file(&fx.roots, "/memories/project/sub/MEMORY.md", Access::Read).is_err());
}

#[cfg(unix)]
#[test]
fn symbolic_links_inside_memory_are_refused() {
    let fx = Fixture::new();
    let outside = fx.base().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("target.md"), "outside").unwrap();
    std::fs::create_dir_all(&fx.roots.project).unwrap();
    std::os::unix::fs::symlink(outside.join("target.md"), fx.roots.project.join("link.md")).unwrap();
    std::os::unix::fs::symlink(&outside, fx.roots.project.join("sub")).unwrap();
    for path in
        ["/memories/project/link.md", "/memories/project/sub/target.md", "/memories/project/sub/new.md"]
    {
        for access in [Access::Read, Access::Write] {
            let error = resolve_file(&fx.roots, path, access).unwrap_err();
            assert!(error.to_string().contains("symbolic link"), "{path}: {error}");
        }
    }
    assert!(
        resolve_view(&fx.roots, "/memories/project/sub").unwrap_err().to_string().contains("symbolic link")
    );
}

#[cfg(unix)]
#[test]
fn a_linked_scope_root_is_followed_once_and_canonicalised() {
    let fx = Fixture::new();
    let real = fx.base().join("dotfiles/memory");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::create_dir_all(fx.roots.user.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &fx.roots.user).unwrap();
    let target = resolve(&fx.roots, "/memories/user/a.md").unwrap();
    assert_eq!(target.path, real.join("a.md"));
}

#[test]
fn a_file_in_place_of_a_folder_is_refused() {
    let fx = Fixture::new();
    std::fs::create_dir_all(&fx.roots.project).unwrap();
    std::fs::write(fx.roots.project.join("notes"), "x").unwrap();
    std::fs::create_dir_all(fx.roots.project.join("dir.md")).unwrap();
    assert!(
        resolve(&fx.roots, "/memories/project/notes/a.md").unwrap_err().to_string().contains("not a folder")
    );
    assert!(
        resolve(&fx.roots, "/memories/project/dir.md").unwrap_err().to_string().contains("names a folder")
    );
}

#[test]
fn view_targets() {
    let fx = Fixture::new();
    assert_eq!(resolve_view(&fx.roots, "/memories").unwrap(), ViewTarget::Root);
    assert_eq!(resolve_view(&fx.roots, "memories/").unwrap(), ViewTarget::Root);
    assert_eq!(
        resolve_view(&fx.roots, "/memories/project").unwrap(),
        ViewTarget::Dir { scope: Scope::Project, dir: String::new(), path: fx.roots.project.clone() }
    );
    assert_eq!(
        resolve_view(&fx.roots, "/memories/shared/team/").unwrap(),
        ViewTarget::Dir {
            scope: Scope::Shared,
            dir: "team".into(),
            path: fx.roots.shared.clone().unwrap().join("team")
        }
    );
    assert!(matches!(resolve_view(&fx.roots, "/memories/shared/a.md").unwrap(), ViewTarget::File(_)));
    assert!(resolve_view(&fx.roots, "/memories/../etc").is_err());
    assert!(resolve_view(&fx.roots, "/").is_err());
}
