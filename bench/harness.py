#!/usr/bin/env python3
"""Harness benchmarks for `lathe -p` against the scripted model server (lathe-mock), optionally side by
side with peer agents (bench/peers/: Codex CLI) in the same run, against the same mock.

Measures, over several runs of each scenario (runs alternate between the agents and scenarios):
  * wall time of the whole process (including /usr/bin/time's own start) and its peak RSS (from
    /usr/bin/time -v: the largest of the process and the children it waited for);
  * time from process start to the first model request arriving at the server;
  * harness time per tool call: end of a response that asked for a tool -> arrival of the next request
    (from the server's request log; includes the tool's own work, which is tiny here), and the same
    for the first call alone.

Scenarios: a one-turn text answer; ten tool calls (one per turn: read_file, grep, glob, list_dir,
shell, edit_file, write_file, ...) followed by a text answer; and, for Lathe alone when the test
dependencies are installed, the ten tool calls with three stdio MCP servers and two hooks configured:
on a first start in a new home (Lathe waits for the servers' tool lists) and on a later start in the
same workspace and home (the lists are remembered and the servers start in the background).
Beside the one-turn answer runs a floor: a small C client (bench/floor/client.c) that only sends one
request, timed the same way, which shows the share of process start and the harness's own spawn.
With --peers, Lathe speaks OpenAI Responses, as Codex does; else Anthropic Messages.

Usage: python3 bench/harness.py [--runs N] [--skip-build] [--peers codex] [--wire W] [--json FILE]
Targets (FEATURES.md section N): >= 20x Codex's wall time and >= 10x lighter; <= 3 ms to the first
request (<= 5 ms with 3 MCP servers + 2 hooks); <= 3 ms per tool call, the first included;
<= 12 MB peak RSS on the one-turn answer.
"""
import argparse
import functools
import importlib
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
EVERYTHING = os.path.join(os.environ.get("LATHE_TEST_DEPS", os.path.join(ROOT, ".test-deps")), "npm",
                          "node_modules", ".bin", "mcp-server-everything")


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


SEED_FILES = {
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn helper() {}\n",
    "README.md": "# bench\n\nA tiny project.\n",
}


def seed(workspace):
    for path, text in SEED_FILES.items():
        os.makedirs(os.path.dirname(os.path.join(workspace, path)), exist_ok=True)
        with open(os.path.join(workspace, path), "w") as f:
            f.write(text)
    # A real project is a git repository: Lathe reads its branch, status and log at start.
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "seed"]):
        subprocess.run(["git", *args], cwd=workspace, env=env, check=True)


class Lathe:
    """`lathe -p` over `wire` (anthropic or responses)."""

    def __init__(self, wire="anthropic", binary=None, name="lathe"):
        self.wire = wire
        self.binary = binary or LATHE
        self.name = name

    def turns(self, turns):
        return turns

    def command(self, url, workspace, tmp):
        home = os.path.join(tmp, "home")
        os.makedirs(home, exist_ok=True)
        base = url if self.wire == "anthropic" else f"{url}/v1"
        argv = [self.binary, "-p", "do the task", "--yolo", "--provider", self.wire, "--base-url", base, "-C", workspace]
        return argv, {**os.environ, "LATHE_HOME": home}


class Peer:
    """A peer agent from bench/peers/<name>.py (install, command, turn translation)."""

    def __init__(self, module):
        self.module = module
        self.name = module.NAME

    def turns(self, turns):
        return self.module.turns(turns, SEED_FILES)

    def command(self, url, workspace, tmp):
        return self.module.command(url, workspace, tmp)


class Floor:
    """bench/floor/client.c: connects and sends one small request, nothing else. Timed like an agent,
    it shows how much of "start -> first request" is process start and the harness's own spawn."""

    name = "floor"
    wire = "anthropic"

    def __init__(self, binary):
        self.binary = binary

    def turns(self, turns):
        return turns

    def command(self, url, workspace, tmp):
        return [self.binary, url.rsplit(":", 1)[1].strip("/")], dict(os.environ)


def floor_client():
    """bench/floor/client.c built with the C compiler (`cc`) into the target directory; None
    without one."""
    source = os.path.join(ROOT, "bench", "floor", "client.c")
    binary = os.path.join(TARGET, "bench-floor-client")
    built = subprocess.run(["cc", "-O2", "-o", binary, source], capture_output=True)
    return binary if built.returncode == 0 else None


def run_once(turns, tmp, agent=None, fresh=True):
    """One run of `agent` (default: Lathe over Anthropic Messages) on a fresh workspace and mock
    (`fresh=False`: on the workspace `tmp` already holds, as it is).

    Returns (wall ms, peak RSS MB, start -> first request ms, harness ms per tool call in order)."""
    agent = agent or Lathe()
    workspace = os.path.join(tmp, "ws")
    if fresh:
        seed(workspace)
    script = os.path.join(tmp, "script.json")
    log = os.path.join(tmp, "requests.jsonl")
    # The mock appends to its log: a second run in the same directory (a later start in the same
    # home) starts from an empty one.
    if os.path.exists(log):
        os.remove(log)
    with open(script, "w") as f:
        json.dump({"turns": agent.turns(turns)}, f)
    mock = subprocess.Popen([MOCK, "--log", log, "scripted", script], stdout=subprocess.PIPE, text=True)
    try:
        url = mock.stdout.readline().strip().split()[-1]
        argv, env = agent.command(url, workspace, tmp)
        start = time.time()
        started = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-v", *argv], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            sys.exit(f"{agent.name} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
    finally:
        mock.terminate()
        mock.wait()
    requests = [json.loads(line) for line in open(log)]
    requests.sort(key=lambda r: r["seq"])
    if len(requests) != len(turns) or any(r["status"] != 200 for r in requests):
        sys.exit(f"{agent.name}: expected {len(turns)} answered requests, the mock logged "
                 f"{[r['status'] for r in requests]}")
    first_request_ms = requests[0]["received_unix_ms"] - start * 1000.0
    per_call = [b["received_ms"] - a["response_end_ms"] for a, b in zip(requests, requests[1:])]
    return wall * 1000.0, rss_kb / 1024.0, first_request_ms, per_call


def first_request(extra_args, agent=None):
    """The body of the first request Lathe sends for a one-turn task, with `extra_args` in place of
    --yolo (e.g. --plan)."""
    agent = agent or Lathe()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = os.path.join(tmp, "ws")
        seed(workspace)
        script = os.path.join(tmp, "script.json")
        log = os.path.join(tmp, "requests.jsonl")
        with open(script, "w") as f:
            json.dump({"turns": scenario_text()}, f)
        mock = subprocess.Popen([MOCK, "--log", log, "scripted", script], stdout=subprocess.PIPE, text=True)
        try:
            url = mock.stdout.readline().strip().split()[-1]
            argv, env = agent.command(url, workspace, tmp)
            argv = [a for a in argv if a != "--yolo"] + extra_args
            subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=True)
        finally:
            mock.terminate()
            mock.wait()
        with open(log) as f:
            return json.loads(f.readline())["body"]


def prompt_size(agent=None):
    """System prompt and tool schemas of the first request, in bytes of compact JSON, with every
    built-in tool: the union of what the default permission mode and plan mode offer (plan mode adds
    exit_plan_mode; the default mode's shell description states the sandbox)."""
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    tools, system = {}, 0
    for extra in ([], ["--plan"]):
        body = first_request(extra, agent)
        system = max(system, len(json.dumps(body.get("system") or body.get("instructions"), **compact).encode()))
        for tool in body["tools"]:
            size = len(json.dumps(tool, **compact).encode())
            tools[tool["name"]] = max(size, tools.get(tool["name"], 0))
    return system, tools


def with_extensions(tmp):
    """Three stdio MCP servers (@modelcontextprotocol/server-everything) in Lathe's mcp.json and two
    no-op hooks (PreToolUse, PostToolUse: `true` for every tool) in the project's settings."""
    home = os.path.join(tmp, "home")
    os.makedirs(home, exist_ok=True)
    servers = {f"s{i}": {"command": EVERYTHING, "args": ["stdio"]} for i in range(3)}
    with open(os.path.join(home, "mcp.json"), "w") as f:
        json.dump({"mcpServers": servers}, f)
    settings = os.path.join(tmp, "ws", ".claude")
    os.makedirs(settings, exist_ok=True)
    hook = [{"matcher": "", "hooks": [{"type": "command", "command": "true"}]}]
    with open(os.path.join(settings, "settings.json"), "w") as f:
        json.dump({"hooks": {"PreToolUse": hook, "PostToolUse": hook}}, f)


def run_with(setup, turns, tmp, agent=None):
    """`run_once` with `setup(tmp)` run after the workspace is seeded."""
    global seed
    original = seed

    def seeded(workspace):
        original(workspace)
        setup(tmp)
    seed = seeded
    try:
        return run_once(turns, tmp, agent)
    finally:
        seed = original


def run_later(setup, turns, tmp, agent):
    """`run_with`, measured on a later start: a first run in the same workspace and home (not
    measured), the workspace put back to its seeded state, then the measured run. Lathe then knows
    the MCP servers' tool lists from the first start and starts the servers in the background."""
    run_with(setup, turns, tmp, agent)
    workspace = os.path.join(tmp, "ws")
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=workspace, check=True)
    subprocess.run(["git", "clean", "-qfd", "-e", ".claude"], cwd=workspace, check=True)
    return run_once(turns, tmp, agent, fresh=False)


def summary(values):
    return f"median {statistics.median(values):8.2f}  min {min(values):8.2f}  max {max(values):8.2f}"


class Figures:
    def __init__(self):
        self.walls, self.rss, self.firsts, self.calls, self.first_calls = [], [], [], [], []

    def add(self, result):
        wall, rss, first, per_call = result
        self.walls.append(wall)
        self.rss.append(rss)
        self.firsts.append(first)
        self.calls.extend(per_call)
        if per_call:
            self.first_calls.append(per_call[0])

    def print(self, label, runs, rss=True):
        print(f"  {label} ({runs} runs)")
        print(f"    wall time (ms)              {summary(self.walls)}")
        if rss:
            print(f"    peak RSS (MB)               {summary(self.rss)}")
        print(f"    start -> first request (ms) {summary(self.firsts)}")
        if self.calls:
            print(f"    harness per tool call (ms)  {summary(self.calls)}  over {len(self.calls)} calls")
            print(f"    first tool call (ms)        {summary(self.first_calls)}")

    def json(self):
        return {"wall_ms": self.walls, "peak_rss_mb": self.rss, "first_request_ms": self.firsts,
                "per_call_ms": self.calls, "first_call_ms": self.first_calls}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--peers", default="", help="comma-separated peers from bench/peers/ (codex)")
    parser.add_argument("--wire", choices=["anthropic", "responses"],
                        help="Lathe's wire protocol (default: anthropic; responses, as Codex, with --peers)")
    parser.add_argument("--baseline", help="another lathe binary (an older build) to run beside this one")
    parser.add_argument("--json", help="write every measurement to this file")
    args = parser.parse_args()
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "lathe", "-p", "lathe-mock", "--all-features"],
                       cwd=ROOT, check=True)
    peers = [p for p in args.peers.split(",") if p]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    wire = args.wire or ("responses" if peers else "anthropic")
    agents = [Lathe(wire)]
    if args.baseline:
        agents.append(Lathe(wire, args.baseline, "lathe baseline"))
    for name in peers:
        module = importlib.import_module(f"peers.{name}")
        module.binary()  # install before the runs
        agents.append(Peer(module))
    floor = floor_client()
    floors = [Floor(floor)] if floor else []
    # (name, turns, how one run goes, the agents that run it, whether Lathe's peak RSS is measured)
    scenarios = [("one-turn text answer", scenario_text(), run_once, agents + floors, True),
                 ("ten tool calls", scenario_ten_tools(), run_once, agents, True)]
    if os.path.exists(EVERYTHING):
        lathes = [agent for agent in agents if isinstance(agent, Lathe)]
        # With MCP servers the peak RSS is a server's (node), not Lathe's.
        first = functools.partial(run_with, with_extensions)
        later = functools.partial(run_later, with_extensions)
        scenarios.append(("ten tool calls, 3 stdio MCP servers + 2 hooks, first start in a new home",
                          scenario_ten_tools(), first, lathes, False))
        scenarios.append(("ten tool calls, 3 stdio MCP servers + 2 hooks, a later start",
                          scenario_ten_tools(), later, lathes, False))
    else:
        print(f"(skipping the MCP + hooks scenarios: {EVERYTHING} is missing; run scripts/install-test-deps.sh)")
    figures = {(s, a.name): Figures() for s, _, _, scenario_agents, _ in scenarios for a in scenario_agents}
    # Runs alternate between the agents (and scenarios), so a load change on the machine hits all alike.
    for _ in range(args.runs):
        for name, turns, run, scenario_agents, _ in scenarios:
            for agent in scenario_agents:
                with tempfile.TemporaryDirectory() as tmp:
                    figures[(name, agent.name)].add(run(turns, tmp, agent))
    load = os.getloadavg()
    print(f"load average after the runs: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    for name, _, _, scenario_agents, rss in scenarios:
        print(name)
        for agent in scenario_agents:
            label = f"{agent.name} ({agent.wire})" if isinstance(agent, Lathe) else agent.name
            if isinstance(agent, Floor):
                label = "floor: a C client that only sends one request"
            figures[(name, agent.name)].print(label, args.runs, rss=rss)
        lathe = figures[(name, agents[0].name)]
        for agent in [agent for agent in scenario_agents[1:] if not isinstance(agent, Floor)]:
            peer = figures[(name, agent.name)]
            print(f"  {agent.name} / lathe, medians: wall {statistics.median(peer.walls) / statistics.median(lathe.walls):.1f}x"
                  f", peak RSS {statistics.median(peer.rss) / statistics.median(lathe.rss):.1f}x")
    system, tools = prompt_size(agents[0])
    print(f"first request with every built-in tool ({agents[0].wire}): system prompt {system} B + "
          f"{len(tools)} tool schemas {sum(tools.values())} B = {system + sum(tools.values())} B")
    print("  " + ", ".join(f"{name} {size}" for name, size in sorted(tools.items(), key=lambda t: -t[1])))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load": load, "runs": args.runs, "prompt": {"system": system, "tools": tools},
                       "figures": {f"{s} / {a}": v.json() for (s, a), v in figures.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
