#!/usr/bin/env python3
"""Cost of MCP servers and hooks for `lathe -p` against the scripted model server (lathe-mock).

Session start with 0, 1 and 3 stdio MCP servers (@modelcontextprotocol/server-everything, installed by
scripts/install-test-deps.sh): wall time of a one-turn answer and time from process start to the first
model request. At a server's first start (a fresh home) the session waits for its tool list (servers
start in parallel, during the rest of set-up); at a later start (the same home after one session) its
tool list is remembered and the server starts in the background, so the first request does not wait.
With no MCP configuration nothing MCP-related runs.

No-op PreToolUse hook: ten tool calls with and without a hook (`true`, matching every tool) in the
project's .claude/settings.json; the difference in harness time per tool call is the hook's cost
(spawning `sh -c true`, writing the event JSON, reading the result).

Usage: python3 bench/extensions.py [--runs N] [--skip-build]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ROOT = harness.ROOT
PREFIX = os.path.join(os.environ.get("LATHE_TEST_DEPS", os.path.join(ROOT, ".test-deps")), "npm")
EVERYTHING = os.path.join(PREFIX, "node_modules", ".bin", "mcp-server-everything")


def with_mcp(servers):
    def setup(tmp):
        config = {"mcpServers": {f"s{i}": {"command": EVERYTHING, "args": ["stdio"]} for i in range(servers)}}
        if servers:
            home = os.path.join(tmp, "home")
            os.makedirs(home, exist_ok=True)
            with open(os.path.join(home, "mcp.json"), "w") as f:
                json.dump(config, f)
    return setup


def with_hook(tmp):
    settings = os.path.join(tmp, "ws", ".claude")
    os.makedirs(settings, exist_ok=True)
    with open(os.path.join(settings, "settings.json"), "w") as f:
        json.dump({"hooks": {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "true"}]}]}}, f)


def no_setup(tmp):
    pass


def measure(turns, setup, runs, later=False):
    """`later`: each measured session follows one unmeasured session in the same home."""
    walls, firsts, calls = [], [], []
    original_seed = harness.seed
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            # The workspace is created by harness.seed; add the scenario's files after it.
            def seed(workspace, tmp=tmp):
                original_seed(workspace)
                setup(tmp)
            harness.seed = seed
            try:
                if later:
                    harness.run_once(turns, tmp)
                    harness.seed = lambda workspace: None
                wall, _rss, first, per_call = harness.run_once(turns, tmp)
            finally:
                harness.seed = original_seed
        walls.append(wall)
        firsts.append(first)
        calls.extend(per_call)
    return walls, firsts, calls


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    if not os.path.exists(EVERYTHING):
        sys.exit(f"{EVERYTHING} is missing: run scripts/install-test-deps.sh")
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "lathe", "-p", "lathe-mock"], cwd=ROOT, check=True)

    print(f"session start with stdio MCP servers ({args.runs} runs each, one-turn answer)")
    for servers in (0, 1, 3):
        walls, firsts, _ = measure(harness.scenario_text(), with_mcp(servers), args.runs)
        print(f"  {servers} servers, first start: wall (ms) {harness.summary(walls)}")
        print(f"             start -> first request (ms) {harness.summary(firsts)}")
        if servers:
            walls, firsts, _ = measure(harness.scenario_text(), with_mcp(servers), args.runs, later=True)
            print(f"  {servers} servers, later start: wall (ms) {harness.summary(walls)}")
            print(f"             start -> first request (ms) {harness.summary(firsts)}")

    print(f"no-op PreToolUse hook, ten tool calls ({args.runs} runs each)")
    _, _, plain = measure(harness.scenario_ten_tools(), no_setup, args.runs)
    _, _, hooked = measure(harness.scenario_ten_tools(), with_hook, args.runs)
    print(f"  without hook, per call (ms) {harness.summary(plain)}")
    print(f"  with hook, per call (ms)    {harness.summary(hooked)}")
    print(f"  hook overhead per call (ms, difference of medians) "
          f"{statistics.median(hooked) - statistics.median(plain):.2f}")


if __name__ == "__main__":
    main()
