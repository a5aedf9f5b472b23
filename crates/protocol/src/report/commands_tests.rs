use super::*;

#[test]
fn test_commands_are_recognised() {
    for command in [
        "pytest",
        "pytest -q tests/test_app.py",
        "python -m pytest -x",
        "python3 -m pytest -q",
        "python3.11 -B -m unittest discover",
        "cd app && python3 -m unittest -q",
        "cargo test -p lathe-protocol",
        "cargo +nightly test",
        "cargo nextest run",
        "npm test",
        "npm run test:unit",
        "yarn test --watch=false",
        "yarn jest src",
        "pnpm test",
        "pnpm vitest run",
        "go test ./...",
        "make test",
        "make -C build check",
        "npx jest",
        "./node_modules/.bin/vitest run",
        "mocha",
        "bundle exec rspec spec/app_spec.rb",
        "ctest --output-on-failure",
        "tox -e py311",
        "nox -s tests",
        "CI=1 timeout 60 pytest -q 2>&1 | tail -20",
        "uv run pytest",
        "poetry run python -m pytest",
        "bash -c 'cd app && pytest -q'",
        "env PYTHONPATH=. pytest",
    ] {
        assert!(is_test_command(command), "{command}");
    }
}

#[test]
fn other_commands_are_not_tests() {
    for command in [
        "ls -la",
        "pip install pytest",
        "cat pytest.ini",
        "cargo build",
        "cargo run -- test",
        "go vet ./...",
        "npm install",
        "npm run build",
        "make",
        "git commit -m 'make tests pass'",
        "echo pytest",
        "python3 app.py",
        "grep -rn test src",
    ] {
        assert!(!is_test_command(command), "{command}");
    }
}

#[test]
fn build_commands_are_recognised() {
    for command in
        ["cargo build --release", "cargo check", "make", "npm run build", "tsc -p .", "go build ./..."]
    {
        assert!(is_build_command(command), "{command}");
    }
    for command in ["ls", "cargo test", "npm install", "python3 app.py"] {
        assert!(!is_build_command(command), "{command}");
    }
}
