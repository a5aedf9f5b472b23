#!/usr/bin/env bash
# Benchmark of Lathe's embedded local model, for each model size (default: 0.5b 1.5b):
#   - prompt processing and generation speed (tokens/s), time to first token on turn 1 (cold: the
#     whole prompt, system turn and tool schemas included) and turn 2 (KV cache reused: only the
#     new messages are evaluated), load time — from crates/local/examples/bench.rs;
#   - peak RSS of that process (/usr/bin/time -v).
# Figures go to bench/local/results/<size>.json and a summary table on stdout.
#   bench/local/run.sh            # both sizes
#   SIZES=0.5b bench/local/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-target}"
out="bench/local/results"
mkdir -p "$out"

scripts/install-build-deps.sh
cargo build --release -p lathe-local --features llama --examples

printf '%-6s %10s %10s %10s %10s %12s %12s %9s\n' model pp_tok/s tg_tok/s tg_free ttft1_ms ttft2_ms t2_eval_tok rss_MB
for size in ${SIZES:-0.5b 1.5b}; do
  "$target/release/examples/fetch" "$size" >/dev/null
  /usr/bin/time -v "$target/release/examples/bench" "$size" >"$out/$size.json" 2>"$out/$size.time"
  rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$out/$size.time")
  python3 - "$out/$size.json" "$size" "$rss_kb" <<'PY'
import json, sys
path, size, rss_kb = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(path))
r["peak_rss_mb"] = round(rss_kb / 1024)
json.dump(r, open(path, "w"), indent=2)
t1, t2, free = r["turn1"], r["turn2"], r["free_generation"]
print(f'{size:<6} {t1["prompt_tok_per_s"]:>10} {t1["generation_tok_per_s"]:>10} {free["generation_tok_per_s"]:>10} '
      f'{t1["first_token_ms"]:>10.0f} {t2["first_token_ms"]:>12.0f} {t2["prompt_eval_tokens"]:>12} {r["peak_rss_mb"]:>9}')
PY
done
