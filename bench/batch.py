#!/usr/bin/env python3
"""Overhead of `lathe batch` per task: the local process pool against a local Ray head, on the same
machine in the same run, against the scripted model server (lathe-mock).

Each round makes N small git repositories (a failing `sh check.sh`, fixed by writing 42 to
answer.txt) and one scripted lathe-mock per task (write_file, then a text answer), then runs the
task file once with `--executor local --workers W` and once with `--executor ray` (`--cpus-per-task`
1 on a head started here with `--num-cpus W`), alternating which goes first. From each batch's
summary.json and results.jsonl:
  * overhead per task = (batch wall time - sum of the tasks' agent seconds / W) / N: what the
    executor adds (starting processes, workspaces, the test run, for Ray also staging and uploading
    the working directory, submitting the job and scheduling tasks);
  * tasks per minute = N / batch wall time * 60.
Medians over the rounds are printed as a table.

Usage: python3 bench/batch.py [--rounds R] [--tasks N] [--workers W] [--release] [--json FILE]
Needs the Ray virtual environment of scripts/install-test-deps.sh (.test-deps/ray-venv, or under
$LATHE_TEST_DEPS). Builds the debug binaries unless --release (then cargo build --release).
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
VENV = os.path.join(os.environ.get("LATHE_TEST_DEPS", os.path.join(ROOT, ".test-deps")), "ray-venv")
RAY = os.path.join(VENV, "bin", "ray")


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "commit.gpgsign=false", *args],
                   cwd=cwd, check=True, capture_output=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_tasks(root, n, mock):
    """N repositories and mocks; returns (task file, mock processes)."""
    mocks, lines = [], []
    for i in range(n):
        repo = os.path.join(root, "repos", f"b{i:03}")
        os.makedirs(repo)
        git(repo, "init", "-q", "-b", "main")
        with open(os.path.join(repo, "check.sh"), "w") as f:
            f.write('test "$(cat answer.txt 2>/dev/null)" = 42\n')
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "a failing check")
        script = os.path.join(root, f"script{i}.json")
        usage = {"input_tokens": 1000, "output_tokens": 50}
        with open(script, "w") as f:
            json.dump({"turns": [
                {"tool_calls": [{"id": "call_1", "name": "write_file",
                                 "arguments": {"path": "answer.txt", "content": "42\n"}}], "usage": usage},
                {"text": "Done.", "usage": usage}]}, f)
        proc = subprocess.Popen([mock, "scripted", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True)
        url = proc.stdout.readline().split()[-1]
        mocks.append(proc)
        lines.append(json.dumps({"id": f"b{i:03}", "repo": repo, "base": "main", "test": "sh check.sh",
                                 "prompt": "Make the test `sh check.sh` pass.", "base_url": url,
                                 "timeout_s": 120}))
    path = os.path.join(root, "tasks.jsonl")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path, mocks


def start_head(tmp, workers, env):
    dashboard = free_port()
    log = open(os.path.join(tmp, "head.log"), "w")
    args = [RAY, "start", "--head", "--block", "--num-cpus", str(workers), "--node-ip-address", "127.0.0.1",
            "--dashboard-host", "127.0.0.1", "--disable-usage-stats", "--temp-dir", os.path.join(tmp, "ray"),
            "--port", str(free_port()), "--dashboard-port", str(dashboard),
            "--ray-client-server-port", str(free_port()), "--dashboard-agent-listen-port", str(free_port())]
    # Its own session: the whole head is killed with its group at the end.
    head = subprocess.Popen(args, stdout=log, stderr=log, env=env, start_new_session=True)
    address = f"http://127.0.0.1:{dashboard}"
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(f"{address}/api/version", timeout=5) as r:
                if "ray_version" in json.load(r):
                    return head, address
        except OSError:
            pass
        if head.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"bench/batch.py: the Ray head did not start (see {log.name})")
        time.sleep(0.2)


def run_batch(lathe, tasks, out, executor, workers, address, env):
    args = [lathe, "batch", tasks, "--out", out, "--provider", "anthropic", "--model", "claude-sonnet-4-5"]
    if executor == "local":
        args += ["--executor", "local", "--workers", str(workers)]
    else:
        args += ["--executor", "ray", "--address", address, "--cpus-per-task", "1"]
    started = time.monotonic()
    done = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"bench/batch.py: lathe batch --executor {executor} exited {done.returncode}: {done.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "results.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    resolved = sum(1 for r in rows if r["status"] == "resolved")
    agent = sum(r.get("agent_s") or 0.0 for r in rows)
    wall = summary["batch_wall_s"]
    n = len(rows)
    return {"executor": executor, "tasks": n, "resolved": resolved, "batch_wall_s": wall,
            "process_wall_s": elapsed, "agent_s_sum": agent,
            "overhead_per_task_s": (wall - agent / workers) / n, "tasks_per_min": n / wall * 60}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--release", action="store_true")
    parser.add_argument("--json", help="write every measurement to this file")
    args = parser.parse_args()
    if not os.path.exists(RAY):
        sys.exit(f"bench/batch.py: no Ray at {RAY}: run scripts/install-test-deps.sh")
    profile = "release" if args.release else "debug"
    build = ["cargo", "build", "-q", "-p", "lathe", "-p", "lathe-mock"] + (["--release"] if args.release else [])
    subprocess.run(build, cwd=ROOT, check=True)
    lathe, mock = (os.path.join(TARGET, profile, b) for b in ("lathe", "lathe-mock"))

    results = []
    with tempfile.TemporaryDirectory(prefix="lbb", dir="/tmp") as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(os.path.join(home, "lathe"))
        with open(os.path.join(home, "lathe", "config.toml"), "w") as f:
            f.write("[retry]\nmax_retries = 0\n")
        env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ANTHROPIC_API_KEY")}
        env.update({"HOME": home, "LATHE_HOME": os.path.join(home, "lathe"), "LATHE_RAY": RAY,
                    "PATH": os.path.join(VENV, "bin") + os.pathsep + env.get("PATH", "")})
        head, address = start_head(tmp, args.workers, env)
        try:
            for round_ in range(args.rounds):
                order = ["local", "ray"] if round_ % 2 == 0 else ["ray", "local"]
                for executor in order:
                    root = os.path.join(tmp, f"r{round_}-{executor}")
                    os.makedirs(root)
                    tasks, mocks = make_tasks(root, args.tasks, mock)
                    try:
                        result = run_batch(lathe, tasks, os.path.join(root, "out"), executor, args.workers,
                                           address, env)
                    finally:
                        for proc in mocks:
                            proc.kill()
                            proc.wait()
                    result["round"] = round_
                    results.append(result)
                    print(f"round {round_} {executor:5}: {result['batch_wall_s']:.1f} s, "
                          f"{result['resolved']}/{result['tasks']} resolved", file=sys.stderr)
        finally:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()

    print(f"lathe batch, {args.tasks} tasks, {args.workers} workers, {args.rounds} rounds ({profile} build), medians:")
    print(f"{'executor':10} {'batch wall s':>13} {'agent s (sum)':>14} {'overhead/task s':>16} {'tasks/min':>10}")
    for executor in ("local", "ray"):
        mine = [r for r in results if r["executor"] == executor]
        med = lambda key: statistics.median(r[key] for r in mine)  # noqa: E731
        print(f"{executor:10} {med('batch_wall_s'):>13.2f} {med('agent_s_sum'):>14.2f} "
              f"{med('overhead_per_task_s'):>16.2f} {med('tasks_per_min'):>10.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
