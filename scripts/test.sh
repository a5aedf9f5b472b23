#!/usr/bin/env bash
# Runs every test of Lathe (CI runs exactly this through .ci/run):
#   1. installs the build dependencies (cmake and libclang-dev for the local model, bubblewrap, tmux, …)
#      when missing, and the MCP servers the MCP tests run against (npm, into .test-deps/);
#   2. builds the workspace with every feature, the local model included;
#   3. fetches the pinned local model with Lathe's own fetcher (hash-checked; a no-op when cached);
#   4. runs the whole test suite, then fmt and clippy.
# The conformance and replay tests read ../shared/{cassettes,replay} beside the repository
# (override with LATHE_CASSETTES / LATHE_REPLAY_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

# A test run builds everything once: incremental state and full debug info would only fill the disk
# (they doubled the target directory). Line tables keep file:line in panics and backtraces.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"

scripts/install-build-deps.sh
cargo test --workspace --all-features --no-run
"${CARGO_TARGET_DIR:-target}/debug/lathe" model fetch 0.5b >/dev/null
cargo test --workspace --all-features
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --all-features -- -D warnings
