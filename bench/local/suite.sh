#!/usr/bin/env bash
# A 5-task local suite: tiny read / write / edit / shell tasks run by the real agent loop
# (`lathe -p … --provider local --yolo`) on each local model; prints the success rate per model.
# Each task runs in a fresh temp workspace; it passes when lathe exits 0 (the model ended the turn
# itself, within --max-turns) and the files or the answer are right. TASK_TIMEOUT (default 240 s)
# bounds each run.
#   bench/local/suite.sh                 # both sizes
#   SIZES=0.5b bench/local/suite.sh
# Needs `lathe` built with the local model: cargo build --release --features local
set -uo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-target}"
lathe="${LATHE_BIN:-$target/release/lathe}"
out="bench/local/results"
mkdir -p "$out"
[ -x "$lathe" ] || { echo "suite: $lathe not found; build it with: cargo build --release --features local" >&2; exit 2; }

# name | setup (run in the workspace) | prompt | check (run in the workspace; $answer holds the output)
tasks=(
  "read|printf 'Buy milk before Friday\nCall the plumber\n' > notes.txt|What is the first line of notes.txt?|grep -q 'Buy milk before Friday' <<<\"\$answer\""
  "write|:|Create a file named hello.txt containing exactly the text: Hello, Lathe!|grep -q 'Hello, Lathe!' hello.txt"
  "edit|printf 'def greet():\n    return \"Helo, world\"\n' > greet.py|In greet.py, fix the typo Helo so the function returns Hello, world.|python3 -c 'import greet; assert greet.greet() == \"Hello, world\"'"
  "shell|:|Run this shell command: echo lathe-ok > done.txt|grep -q lathe-ok done.txt"
  "count|printf 'a\nb\nc\nd\n' > data.txt|How many lines does data.txt have? Use a shell command to count them.|grep -qw 4 <<<\"\$answer\" && ! grep -qw 3 <<<\"\$answer\""
)

for size in ${SIZES:-0.5b 1.5b}; do
  model="$("$lathe" model path "$size")"
  [ -f "$model" ] || "$lathe" model fetch "$size" >/dev/null || { echo "suite: cannot fetch $size" >&2; continue; }
  passed=0
  log="$out/suite-$size.log"
  : >"$log"
  for task in "${tasks[@]}"; do
    IFS='|' read -r name setup prompt check <<<"$task"
    # A fixed, ordinary-looking path: the workspace path is in the system prompt, and a random
    # temp name (tmp.Xq3…) measurably changes what a small model does.
    dir="${TMPDIR:-/tmp}/lathe-suite/$name"
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && eval "$setup")
    start=$(date +%s%N)
    answer="$(timeout "${TASK_TIMEOUT:-240}" "$lathe" -p "$prompt" --provider local --model-path "$model" --yolo -C "$dir" --max-turns 8 2>>"$log")"
    status=$?
    elapsed=$(( ($(date +%s%N) - start) / 1000000000 ))
    if [ "$status" -eq 0 ] && (cd "$dir" && answer="$answer" eval "$check") 2>/dev/null; then
      result=pass; passed=$((passed + 1))
    else
      result=FAIL
    fi
    printf '%-5s %-6s %-4s exit=%-3s %6ss  %s\n' "$size" "$name" "$result" "$status" "$elapsed" "$(tr '\n' ' ' <<<"$answer" | cut -c1-80)"
    printf '== %s %s: %s (exit %s)\n%s\n' "$size" "$name" "$result" "$status" "$answer" >>"$log"
    rm -rf "$dir"
  done
  echo "$size: $passed/${#tasks[@]} tasks passed"
done
