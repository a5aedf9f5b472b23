#!/usr/bin/env bash
# Decision time per shell command over the 300-command corpus (optimised build, one thread).
# Prints the first decision's time, then median / p90 / p99 / max per command in µs.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec cargo bench -q -p lathe-policy --bench decide -- "$PWD/bench/policy/commands.jsonl" "${1:-20}"
