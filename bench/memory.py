#!/usr/bin/env python3
"""Memory benchmark (FEATURES.md section N: recall <= 2 ms per user turn over 1 000 entries;
start -> first request <= 5 ms added by 1 000 entries).

  * recall: `cargo bench -p lathe-core --bench memory_recall` (in-process: SessionMemory::open over a
    generated user scope, then recall for 200 prompts, median / p90 / p99 per user turn);
  * start -> first request: `lathe -p` against lathe-mock with an empty memory and with 1 000 entries
    in the user scope, from process start until the request reaches the mock (medians of --runs runs,
    alternating, same machine, same mock); and with 1 000 entries but an empty cache folder (no record
    of parsed entries, ~/.lathe/cache/memory-entries/, and none of the lines already found free of
    secrets, ~/.lathe/cache/memory-clean-lines), as on the first start after every entry changed.
    The entries are written more than 2 s before the first run: files changed more recently are never
    recorded (crates/core/src/memory/entry_cache.rs).

Usage: python3 bench/memory.py [--runs N] [--entries N] [--skip-build]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
LATHE = os.path.join(TARGET, "release", "lathe")
MOCK = os.path.join(TARGET, "release", "lathe-mock")
TOPICS = ["pnpm", "pytest", "docker", "postgres", "rustfmt", "release", "eslint", "webpack", "migrations", "logging"]


def entry(n):
    topic = TOPICS[n % len(TOPICS)]
    # Real notes name tokens, keys and passing tests now and then (words the secret rules look for).
    token = "; its deploy token comes from the vault" if n % 8 == 0 else ""
    key = " Its tests pass only with the API key of the staging account." if n % 5 == 0 else ""
    return (f"---\nname: note-{n}\ndescription: How we use {topic} in service {n}{token}\ntype: project\n"
            f"source: user\ncreated: 2026-01-01T00:00:00Z\nmodified: 2026-01-01T00:00:00Z\nuse_count: 0\n---\n"
            f"Service {n} configures {topic} through its own settings file; keep the timeout at {n % 60} s.{key}\n")


def first_request_ms(home, workspace, tmp, name):
    script = os.path.join(tmp, f"{name}.json")
    log = os.path.join(tmp, f"{name}.jsonl")
    with open(script, "w") as f:
        json.dump({"turns": [{"text": "ok"}]}, f)
    mock = subprocess.Popen([MOCK, "--log", log, "scripted", script], stdout=subprocess.PIPE, text=True)
    url = mock.stdout.readline().strip().split()[-1]
    try:
        start = time.time()
        done = subprocess.run([LATHE, "-p", "how do we configure pnpm?", "--provider", "anthropic", "--base-url", url,
                               "-C", workspace, "--memory", "read-only"],
                              env={**os.environ, "LATHE_HOME": home}, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"lathe failed: {done.stderr}")
        received = min(json.loads(line)["received_unix_ms"] for line in open(log))
        return received - start * 1000.0
    finally:
        mock.terminate()
        mock.wait()


def summary(values):
    return f"median {statistics.median(values):7.2f}  min {min(values):7.2f}  max {max(values):7.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "lathe", "-p", "lathe-mock"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "bench", "-q", "-p", "lathe-core", "--bench", "memory_recall"], cwd=ROOT, check=True,
                   env={**os.environ, "ENTRIES": str(args.entries)})
    with tempfile.TemporaryDirectory() as tmp:
        homes = {}
        for name, count in (("empty", 0), ("full", args.entries)):
            home = os.path.join(tmp, name)
            os.makedirs(os.path.join(home, "memory"))
            with open(os.path.join(home, "config.toml"), "w") as f:
                f.write("[retry]\nmax_retries = 0\n")
            for n in range(count):
                with open(os.path.join(home, "memory", f"note-{n}.md"), "w") as f:
                    f.write(entry(n))
            homes[name] = home
        workspace = os.path.join(tmp, "ws")
        os.makedirs(workspace)
        time.sleep(2.1)
        times = {"empty": [], "full": [], "first": [], "unparsed": []}
        for run in range(args.runs):
            for name in ("empty", "full", "first", "unparsed"):
                home = homes[name if name in homes else "full"]
                if name == "first":
                    # A first start after every entry changed: nothing recorded in the cache yet.
                    shutil.rmtree(os.path.join(home, "cache"), ignore_errors=True)
                if name == "unparsed":
                    # Every line known to be clean, but no record of parsed entries: each file read.
                    shutil.rmtree(os.path.join(home, "cache", "memory-entries"), ignore_errors=True)
                times[name].append(first_request_ms(home, workspace, tmp, f"{name}{run}"))
        load = os.getloadavg()[0]
        added = statistics.median(times["full"]) - statistics.median(times["empty"])
        print(f"start -> first request, {args.runs} runs each, load average {load:.1f}")
        print(f"  no memory entries (ms)       {summary(times['empty'])}")
        print(f"  {args.entries} memory entries (ms)   {summary(times['full'])}")
        print(f"  added by the entries (ms)    {added:7.2f} (difference of the medians)")
        first = statistics.median(times["first"]) - statistics.median(times["empty"])
        print(f"  the same with an empty cache (first start after every entry changed): {first:7.2f} ms added")
        unparsed = statistics.median(times["unparsed"]) - statistics.median(times["empty"])
        print(f"  the same with no record of parsed entries (every file read and parsed): {unparsed:7.2f} ms added")


if __name__ == "__main__":
    main()
