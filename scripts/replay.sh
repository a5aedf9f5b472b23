#!/usr/bin/env bash
# Replays one recorded agent run end to end (shared/replay/FORMAT.md §3) and shows what happened:
# seeds a temp workspace, serves the case with `lathe-mock replay`, runs `lathe -p … --yolo` against it
# (one more `--continue` run per user injection), then prints the server's stats and the workspace.
#
#   scripts/replay.sh ../shared/replay/R2.json [anthropic|openai|responses]
#
# The automated check of every case (expects and oracles) is the `replay` test of the lathe crate.
set -euo pipefail
case_file=$(realpath "${1:?usage: scripts/replay.sh CASE.json [anthropic|openai|responses]}")
provider=${2:-anthropic}
cd "$(dirname "$0")/.."
cargo build -q -p lathe -p lathe-mock
bin="${CARGO_TARGET_DIR:-target}/debug"

tmp=$(mktemp -d)
trap 'kill "${mock_pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
ws="$tmp/ws"; mkdir -p "$ws" "$tmp/home"
export LATHE_HOME="$tmp/home" GIT_AUTHOR_NAME=replay GIT_AUTHOR_EMAIL=replay@lathe.invalid \
  GIT_COMMITTER_NAME=replay GIT_COMMITTER_EMAIL=replay@lathe.invalid PIP_NO_INDEX=1 CARGO_NET_OFFLINE=true
python3 - "$case_file" "$ws" > "$tmp/prompts.json" <<'PY'
import json, os, subprocess, sys
case = json.load(open(sys.argv[1])); ws = sys.argv[2]
for path, text in case.get("seed_files", {}).items():
    target = os.path.join(ws, path); os.makedirs(os.path.dirname(target), exist_ok=True)
    open(target, "w", encoding="utf-8", newline="").write(text)
for path in case.get("seed_executable", []):
    os.chmod(os.path.join(ws, path), 0o755)
if case.get("seed_git"):
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "seed"]):
        subprocess.run(["git", *args], cwd=ws, check=True)
prompts = [case["prompt"]] + [t["user_injection"] for t in case["turns"] if t.get("user_injection")]
print(json.dumps({"prompts": prompts, "turns": len(case["turns"]), "env": case.get("harness_env", {})}))
PY

"$bin/lathe-mock" --log "$tmp/requests.jsonl" replay "$case_file" > "$tmp/mock.out" &
mock_pid=$!
for _ in $(seq 50); do [ -s "$tmp/mock.out" ] && break; sleep 0.1; done
url=$(head -n1 "$tmp/mock.out" | awk '{print $NF}')
[ "$provider" = anthropic ] || url="$url/v1"

turns=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["turns"])' "$tmp/prompts.json")
python3 -c 'import json,sys; sys.stdout.write("".join(p + "\0" for p in json.load(open(sys.argv[1]))["prompts"]))' \
  "$tmp/prompts.json" > "$tmp/prompts.txt"
status=0; first=1
while IFS= read -r -d '' prompt; do
  extra=(); [ $first = 1 ] || extra=(--continue); first=0
  echo "== lathe -p (${#prompt} chars) ${extra[*]:-}" >&2
  "$bin/lathe" -p "$prompt" --yolo --provider "$provider" --base-url "$url" --max-turns $((turns + 5)) \
    -C "$ws" "${extra[@]}" < /dev/null || { status=$?; break; }
done < "$tmp/prompts.txt"

echo "== mock stats" >&2
curl -s "${url%/v1}/_mock/stats" || python3 -c "import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1]).read().decode())" "${url%/v1}/_mock/stats"
echo
echo "== workspace" >&2
(cd "$ws" && find . -path ./.git -prune -o -type f -print | sort)
exit $status
