#!/usr/bin/env python3
"""Harness benchmarks for `lathe -p` against the scripted model server (lathe-mock).

Measures, over several runs of each scenario:
  * wall time of the whole `lathe -p` process (including /usr/bin/time's own start) and its peak RSS
    (from /usr/bin/time -v);
  * time from process start to the first model request arriving at the server;
  * harness time per tool call: end of a response that asked for a tool -> arrival of the next request
    (from the server's request log; includes the tool's own work, which is tiny here).

Scenarios: a one-turn text answer, and ten tool calls (one per turn: read_file, grep, glob, list_dir,
shell, edit_file, write_file, ...) followed by a text answer.

Usage: python3 bench/harness.py [--runs N] [--skip-build]
Targets (FEATURES.md section N): <= 20 ms to first request, <= 30 MB peak RSS, <= 5 ms per tool call.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
LATHE = os.path.join(TARGET, "release", "lathe")
MOCK = os.path.join(TARGET, "release", "lathe-mock")


def scenario_text():
    return [{"text": "The answer is 42.", "usage": {"input_tokens": 1200, "output_tokens": 8}}]


def scenario_ten_tools():
    calls = [
        ("read_file", {"path": "src/lib.rs"}),
        ("grep", {"pattern": "fn ", "path": "src"}),
        ("glob", {"pattern": "**/*.rs"}),
        ("list_dir", {"path": "."}),
        ("shell", {"command": "echo hello"}),
        ("read_file", {"path": "README.md"}),
        ("edit_file", {"path": "src/lib.rs", "old_string": "a + b", "new_string": "b + a"}),
        ("read_file", {"path": "src/lib.rs", "offset": 1, "limit": 5}),
        ("write_file", {"path": "notes.txt", "content": "benchmark\n"}),
        ("grep", {"pattern": "benchmark", "output_mode": "files"}),
    ]
    turns = [{"tool_calls": [{"id": f"call_{i}", "name": n, "arguments": a}],
              "usage": {"input_tokens": 1000 + 100 * i, "output_tokens": 20}} for i, (n, a) in enumerate(calls)]
    turns.append({"text": "Done.", "usage": {"input_tokens": 2100, "output_tokens": 5}})
    return turns


def seed(workspace):
    os.makedirs(os.path.join(workspace, "src"), exist_ok=True)
    with open(os.path.join(workspace, "src", "lib.rs"), "w") as f:
        f.write("pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn helper() {}\n")
    with open(os.path.join(workspace, "README.md"), "w") as f:
        f.write("# bench\n\nA tiny project.\n")
    # A real project is a git repository: Lathe reads its branch, status and log at start.
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "seed"]):
        subprocess.run(["git", *args], cwd=workspace, env=env, check=True)


def run_once(turns, tmp):
    workspace = os.path.join(tmp, "ws")
    home = os.path.join(tmp, "home")
    os.makedirs(home, exist_ok=True)
    seed(workspace)
    script = os.path.join(tmp, "script.json")
    log = os.path.join(tmp, "requests.jsonl")
    with open(script, "w") as f:
        json.dump({"turns": turns}, f)
    mock = subprocess.Popen([MOCK, "--log", log, "scripted", script], stdout=subprocess.PIPE, text=True)
    try:
        url = mock.stdout.readline().strip().split()[-1]
        start = time.time()
        started = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-v", LATHE, "-p", "do the task", "--yolo", "--provider", "anthropic",
             "--base-url", url, "-C", workspace],
            env={**os.environ, "LATHE_HOME": home}, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            sys.exit(f"lathe failed ({proc.returncode}): {proc.stderr[-2000:]}")
        rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
    finally:
        mock.terminate()
        mock.wait()
    requests = [json.loads(line) for line in open(log)]
    requests.sort(key=lambda r: r["seq"])
    first_request_ms = requests[0]["received_unix_ms"] - start * 1000.0
    per_call = [b["received_ms"] - a["response_end_ms"] for a, b in zip(requests, requests[1:])]
    return wall * 1000.0, rss_kb / 1024.0, first_request_ms, per_call


def summary(values):
    return f"median {statistics.median(values):8.2f}  min {min(values):8.2f}  max {max(values):8.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "lathe", "-p", "lathe-mock"], cwd=ROOT, check=True)
    for name, turns in [("one-turn text answer", scenario_text()), ("ten tool calls", scenario_ten_tools())]:
        walls, rsss, firsts, calls = [], [], [], []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                wall, rss, first, per_call = run_once(turns, tmp)
            walls.append(wall)
            rsss.append(rss)
            firsts.append(first)
            calls.extend(per_call)
        print(f"{name} ({args.runs} runs)")
        print(f"  wall time (ms)              {summary(walls)}")
        print(f"  peak RSS (MB)               {summary(rsss)}")
        print(f"  start -> first request (ms) {summary(firsts)}")
        if calls:
            print(f"  harness per tool call (ms)  {summary(calls)}  over {len(calls)} calls")


if __name__ == "__main__":
    main()
