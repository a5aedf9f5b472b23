#!/usr/bin/env bash
# Runs every test of Lathe (CI runs exactly this through .ci/run):
#   1. installs the build dependencies (cmake and libclang-dev for the local model, bubblewrap, tmux, …)
#      when missing, and the MCP servers the MCP tests run against (npm, into .test-deps/);
#   2. fetches every package of Cargo.lock, for every platform (the MSRV test reads them all);
#   3. builds the workspace with every feature, the local model included;
#   4. fetches the pinned local model with Lathe's own fetcher (hash-checked; a no-op when cached);
#   5. runs the whole test suite, then fmt, clippy, cargo-machete (no unused dependency; installed
#      with cargo when missing) and a check that process groups are handled in crates/process only.
# Each step says what it does and how long it took. The conformance and replay tests read
# ../shared/{cassettes,replay} beside the repository (override with LATHE_CASSETTES / LATHE_REPLAY_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

# A test run builds everything once: incremental state and full debug info would only fill the disk
# (they doubled the target directory). Line tables keep file:line in panics and backtraces.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"

started=$SECONDS
# step DESCRIPTION COMMAND...: runs COMMAND, then prints how long it took (and the total so far).
step() {
  local what="$1" at=$SECONDS
  shift
  echo "test.sh: $what …" >&2
  "$@"
  echo "test.sh: $what: done in $((SECONDS - at)) s ($((SECONDS - started)) s in all)" >&2
}

step "installing missing build and test dependencies" scripts/install-build-deps.sh
step "fetching the crates of Cargo.lock (every platform)" cargo fetch --locked
step "building the workspace and its tests (all features; 6 to 8 min on 2 cores the first time)" \
  cargo test --workspace --all-features --no-run
fetch_model() { "${CARGO_TARGET_DIR:-target}/debug/lathe" model fetch 0.5b >/dev/null; }
step "fetching the local model (0.5b; a no-op when cached)" fetch_model
step "running the tests" cargo test --workspace --all-features
step "checking formatting" cargo fmt --all -- --check
step "running clippy" cargo clippy --workspace --all-targets --all-features -- -D warnings
MACHETE_VERSION=0.9.2
install_machete() {
  if [ "$(cargo machete --version 2>/dev/null)" != "$MACHETE_VERSION" ]; then
    cargo install cargo-machete --version "$MACHETE_VERSION" --locked --quiet
  fi
}
step "installing cargo-machete $MACHETE_VERSION (when missing)" install_machete
step "checking for unused dependencies" cargo machete
# Process groups are started and signalled in one module only (crates/process).
process_groups_in_one_module() {
  local elsewhere
  elsewhere=$(grep -rlE 'libc::(killpg|setsid|setpgid)|\.process_group\(' crates/*/src --include='*.rs' | grep -vE '^crates/process/|_tests\.rs$' || true)
  [ -z "$elsewhere" ] || { echo "process-group code outside crates/process: $elsewhere" >&2; return 1; }
}
step "checking that process groups are handled in crates/process only" process_groups_in_one_module
step "checking that the modules of lathe-core import each other without a cycle" \
  python3 scripts/module-cycles.py crates/core/src
# No source file over 500 lines, tests (`*_tests.rs`, `tests/`) excepted.
files_under_500_lines() {
  local long
  long=$(find crates -name '*.rs' -path '*/src/*' ! -name '*_tests.rs' ! -name 'tests.rs' -exec awk 'END { if (NR > 500) print FILENAME ": " NR " lines" }' {} \;)
  [ -z "$long" ] || { echo "files over 500 lines: $long" >&2; return 1; }
}
step "checking that no source file is over 500 lines" files_under_500_lines
