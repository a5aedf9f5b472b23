#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn tests_ci_build_scripts_and_the_checks_own_files_are_protected() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for path in [
        "tests/test_x.py",
        "src/app.py",
        "pkg/util_test.go",
        "Makefile",
        ".github/workflows/ci.yml",
        "run.sh",
    ] {
        write(root, path, "x\n");
    }
    write(root, ".git/hooks/test_hook.py", "x\n");
    let snapshot = Snapshot::take(root, Some("bash ./run.sh && make"));
    let protected: Vec<&str> = snapshot.protected.keys().map(String::as_str).collect();
    assert_eq!(
        protected,
        [".github/workflows/ci.yml", "Makefile", "pkg/util_test.go", "run.sh", "tests/test_x.py"]
    );
    assert_eq!(snapshot.files.len(), 6, "the git dir is not walked");
}

#[test]
fn a_changed_or_deleted_protected_file_is_reported_with_its_diff() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "tests/test_x.py", "def test_x():\n    assert add(1, 2) == 3\n");
    write(root, "tests/test_y.py", "def test_y():\n    pass\n");
    write(root, "src/app.py", "def add(a, b):\n    return a - b\n");
    let start = Snapshot::take(root, None);
    write(root, "src/app.py", "def add(a, b):\n    return a + b\n");
    let now = Snapshot::take(root, None);
    assert!(start.protected_changes(root, &now).is_empty(), "only the code changed");
    assert_eq!(start.changed_files(&now), ["src/app.py"]);

    write(root, "tests/test_x.py", "def test_x():\n    assert True\n");
    std::fs::remove_file(root.join("tests/test_y.py")).unwrap();
    let now = Snapshot::take(root, None);
    let changes = start.protected_changes(root, &now);
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0].path, "tests/test_x.py");
    assert!(changes[0].diff.contains("-    assert add(1, 2) == 3\n+    assert True"), "{}", changes[0].diff);
    assert_eq!(changes[1].diff, "deleted");
}
