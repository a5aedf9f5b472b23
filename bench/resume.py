#!/usr/bin/env python3
"""Resume benchmark: `lathe -p … --continue` on a session of 10 000 ledger items.

Builds a session the ordinary way (one `lathe -p` run against lathe-mock), appends generated items to
its file until it holds ITEMS items (cycles of: user message, assistant message with a read_file call,
its tool result with ~1.5 KB of output, assistant text), then measures over several runs:
  * start -> first request: from process start until the resumed conversation's request reaches the
    mock (loading and checking the file, pairing repair, prompt assembly, context accounting,
    encoding the request and sending it) — the resume figure of FEATURES.md section N (target <=
    150 ms). The generated items (~1.3 M tokens) exceed the model's context window, so that first
    request is the compaction's summary request (built from the newest rounds that fit), as it is
    for a user who resumes such a session;
  * wall time of the whole resumed run (the mock answers at once; the summary round-trip included),
    and its CPU time (user + system), which stays meaningful on a loaded machine;
  * wall time of `lathe sessions --json`, which loads and summarises the same file.
Each resumed run appends to the file, so every run starts from a copy of the generated file.

Usage: python3 bench/resume.py [--runs N] [--items N] [--skip-build]
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


def generated_items(count):
    output = "".join(f"{n:5}\t    let value_{n} = compute({n}, \"some text\");\n" for n in range(1, 31))
    items = []
    n = 0
    while len(items) < count:
        n += 1
        call_id = f"toolu_{n:06}"
        items.append({"type": "user", "content": [{"kind": "text", "text": f"step {n}: look at src/mod_{n}.rs"}]})
        items.append({"type": "assistant", "stop": "tool_use", "model": "claude-sonnet-4-5",
                      "usage": {"input_tokens": 1000 + n, "output_tokens": 40},
                      "content": [{"kind": "text", "text": "Let me read the file."},
                                  {"kind": "tool_call", "id": call_id, "name": "read_file",
                                   "arguments": {"path": f"src/mod_{n}.rs"}}]})
        items.append({"type": "tool_result", "call_id": call_id, "is_error": False, "status": "completed",
                      "content": [{"kind": "text", "text": output}],
                      "receipt": {"tool": "read_file", "summary": f"src/mod_{n}.rs", "decision": "allow (read-only)",
                                  "started_ms": 1700000000000 + n, "elapsed_ms": 1}})
        items.append({"type": "assistant", "stop": "end_turn", "model": "claude-sonnet-4-5",
                      "usage": {"input_tokens": 1500 + n, "output_tokens": 80},
                      "content": [{"kind": "text", "text": f"mod_{n} computes values 1 to 30; nothing to change. " * 4}]})
    return items[:count]


class Mock:
    def __init__(self, turns, tmp, name):
        script = os.path.join(tmp, f"{name}.json")
        self.log = os.path.join(tmp, f"{name}.jsonl")
        with open(script, "w") as f:
            json.dump({"turns": turns}, f)
        self.proc = subprocess.Popen([MOCK, "--log", self.log, "scripted", script], stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip().split()[-1]

    def first_request_unix_ms(self):
        requests = [json.loads(line) for line in open(self.log)]
        return min(r["received_unix_ms"] for r in requests)

    def close(self):
        self.proc.terminate()
        self.proc.wait()


class Done:
    def __init__(self, returncode, stdout, stderr, cpu_ms):
        self.returncode, self.stdout, self.stderr, self.cpu_ms = returncode, stdout, stderr, cpu_ms


def lathe(home, workspace, url, *args):
    """Runs lathe to its end; returns its exit status, output and CPU time (user + system, ms)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [LATHE, *args, "--provider", "anthropic", "--base-url", url, "-C", workspace],
            env={**os.environ, "LATHE_HOME": home}, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Done(proc.returncode, out.read().decode(), err.read().decode(),
                    (usage.ru_utime + usage.ru_stime) * 1000.0)


def summary(values):
    return f"median {statistics.median(values):8.2f}  min {min(values):8.2f}  max {max(values):8.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "lathe", "-p", "lathe-mock"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = os.path.join(tmp, "home"), os.path.join(tmp, "ws")
        os.makedirs(home)
        os.makedirs(workspace)
        mock = Mock([{"text": "ready"}], tmp, "setup")
        done = lathe(home, workspace, mock.url, "-p", "start")
        mock.close()
        if done.returncode != 0:
            sys.exit(f"lathe failed: {done.stderr}")
        sessions = os.path.join(home, "sessions")
        project = os.path.join(sessions, os.listdir(sessions)[0])
        path = os.path.join(project, next(name for name in os.listdir(project) if name.endswith(".jsonl")))
        with open(path) as f:
            existing = sum(1 for _ in f)
        with open(path, "a") as f:
            for item in generated_items(args.items - existing):
                f.write(json.dumps(item, separators=(",", ":")) + "\n")
        pristine = path + ".pristine"
        shutil.copyfile(path, pristine)
        size_mb = os.path.getsize(path) / 1e6

        firsts, walls, cpus, lists = [], [], [], []
        for run in range(args.runs):
            shutil.copyfile(pristine, path)
            # ~1.3 M tokens do not fit the model's 200 k window: the resumed run compacts first
            # (the mock's first answer is the summary), then sends the prompt.
            summary_turn = {"text": "## User's task and constraints\nNext step.\n## Next step\nContinue."}
            mock = Mock([summary_turn, {"text": "resumed"}], tmp, f"run{run}")
            try:
                start = time.time()
                started = time.perf_counter()
                done = lathe(home, workspace, mock.url, "-p", "next step", "--continue")
                walls.append((time.perf_counter() - started) * 1000.0)
                cpus.append(done.cpu_ms)
                if done.returncode != 0 or done.stdout.strip() != "resumed":
                    sys.exit(f"resume failed ({done.returncode}): {done.stderr[-2000:]}")
                firsts.append(mock.first_request_unix_ms() - start * 1000.0)
            finally:
                mock.close()
            started = time.perf_counter()
            listed = subprocess.run([LATHE, "sessions", "--json", "-C", workspace], env={**os.environ, "LATHE_HOME": home},
                                    stdout=subprocess.PIPE, text=True, check=True)
            lists.append((time.perf_counter() - started) * 1000.0)
            if json.loads(listed.stdout)[0]["turns"] < args.items // 4:
                sys.exit("the session list does not show the generated turns")
        load = os.getloadavg()[0]
        print(f"resume of a {args.items}-item session ({size_mb:.1f} MB), {args.runs} runs, load average {load:.1f}")
        print(f"  start -> first request (ms)  {summary(firsts)}")
        print(f"  resumed run wall time (ms)   {summary(walls)}")
        print(f"  resumed run CPU time (ms)    {summary(cpus)}")
        print(f"  lathe sessions --json (ms)   {summary(lists)}")


if __name__ == "__main__":
    main()
