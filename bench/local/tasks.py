#!/usr/bin/env python3
"""Twelve small real coding tasks for Lathe's embedded local model (a benchmark, not a CI test).

Each task gets a fresh workspace (a few small Python files, a CSV, notes), runs
`lathe -p TASK --provider local --model SIZE --yolo --output-format stream-json`
and is checked by running code in the workspace (or, for a question, by the answer). Files the task
must not touch are compared byte for byte afterwards; a Python file that worked before the run (a script
ran, a module imported) and does not after a run that reported success counts as `broken_success`.

Reported per model: pass rate, median and max seconds per task, peak RSS of lathe (MB), how often
a loop guard fired (a call refused by the per-response cap or the repeated-call check, or a run
ended as error_no_progress), and the exit code and subtype of every run.

Usage:  python3 bench/local/tasks.py [--sizes 0.5b,1.5b] [--only typo,csv_rows] [--timeout 300]
Needs:  `lathe` built with the local model (cargo build --release --features local), the models
        fetched (`lathe model fetch 0.5b`), python3, /usr/bin/time. Results go to
        bench/local/results/tasks-<size>.json and a table on stdout.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
LATHE = os.environ.get("LATHE_BIN", os.path.join(TARGET, "release", "lathe"))
# Results of calls a loop guard refused start with one of these (crates/core/src/guards.rs).
GUARD_MARKS = ("not run: your response made", "not run: you already made this exact call")


def py(code):
    """A check that runs `python3 -c code` in the workspace."""
    return ("py", code)


def answer_has(*patterns):
    """A check on the final answer: every regex matches (case-insensitive)."""
    return ("answer", patterns)


TASKS = [
    {
        "name": "typo",
        "files": {"greet.py": 'def greet(name):\n    return "Helo, " + name + "!"\n\n\nif __name__ == "__main__":\n'
                              '    print(greet("world"))\n'},
        "prompt": "Fix the typo in greet.py: the greeting should say Hello, not Helo.",
        "check": py('import greet; assert greet.greet("Ann") == "Hello, Ann!", greet.greet("Ann")'),
        "changes": ["greet.py"],
    },
    {
        "name": "add_function",
        "files": {"mathutil.py": 'def add(a, b):\n    """Return a plus b."""\n    return a + b\n\n\n'
                                 'def subtract(a, b):\n    """Return a minus b."""\n    return a - b\n'},
        "prompt": "Add a function multiply(a, b) to mathutil.py that returns a times b. Keep the existing functions.",
        "check": py("import mathutil as m; assert m.multiply(3, 4) == 12; assert m.add(2, 3) == 5; "
                    "assert m.subtract(5, 3) == 2"),
        "changes": ["mathutil.py"],
    },
    {
        "name": "off_by_one",
        "files": {"series.py": 'def sum_to(n):\n    """Return 1 + 2 + ... + n."""\n    total = 0\n'
                               '    for i in range(1, n):\n        total += i\n    return total\n'},
        "prompt": "sum_to in series.py has an off-by-one bug: sum_to(3) returns 3 but should return 6. Fix it.",
        "check": py("import series; assert series.sum_to(3) == 6; assert series.sum_to(10) == 55; "
                    "assert series.sum_to(1) == 1"),
        "changes": ["series.py"],
    },
    {
        "name": "rename_local",
        "files": {"geometry.py": 'def area(width, height):\n    x = width * height\n    return x\n\n\n'
                                 'def perimeter(width, height):\n    return 2 * (width + height)\n'},
        "prompt": "In geometry.py, rename the local variable x in the function area to result.",
        "check": py("import geometry, re; src = open('geometry.py').read(); "
                    "assert 'result = width * height' in src and 'return result' in src; "
                    "assert not re.search(r'\\bx\\b', src); assert geometry.area(2, 3) == 6; "
                    "assert geometry.perimeter(2, 3) == 10"),
        "changes": ["geometry.py"],
    },
    {
        "name": "create_script",
        "files": {},
        "prompt": "Create a Python script count.py that prints the numbers 1 to 5, one per line.",
        "check": ("sh", "test \"$(python3 count.py)\" = \"$(printf '1\\n2\\n3\\n4\\n5')\""),
        "changes": ["count.py"],
    },
    {
        "name": "find_definition",
        "files": {"app.py": "from util.helpers import parse_date\n\nprint(parse_date('2024-01-02'))\n",
                  "util/__init__.py": "",
                  "util/helpers.py": "def parse_date(text):\n    year, month, day = text.split('-')\n"
                                     "    return int(year), int(month), int(day)\n",
                  "util/format.py": "def show(value):\n    return str(value)\n"},
        "prompt": "Which file defines the function parse_date?",
        # The defining file, and not the file that imports it or the other module.
        "check": answer_has(r"util/helpers\.py|helpers\.py", r"(?s)^(?!.*\bapp\.py)(?!.*format\.py)"),
        "changes": [],
    },
    {
        "name": "change_constant",
        "files": {"config.py": "MAX_RETRIES = 3\nTIMEOUT = 10\n",
                  "client.py": "from config import MAX_RETRIES\n\n\ndef attempts():\n    return MAX_RETRIES\n"},
        "prompt": "Change MAX_RETRIES in config.py from 3 to 5.",
        "check": py("import config, client; assert config.MAX_RETRIES == 5; assert config.TIMEOUT == 10; "
                    "assert client.attempts() == 5"),
        "changes": ["config.py"],
    },
    {
        "name": "missing_import",
        "files": {"geom.py": "def hypot(a, b):\n    return math.sqrt(a * a + b * b)\n"},
        "prompt": "Calling hypot in geom.py fails with NameError: name 'math' is not defined. Add the missing import.",
        "check": py("import geom; assert geom.hypot(3, 4) == 5.0"),
        "changes": ["geom.py"],
    },
    {
        "name": "make_test_pass",
        "files": {"calc.py": 'def average(values):\n    """The arithmetic mean of values."""\n'
                             '    return sum(values) / (len(values) + 1)\n',
                  "test_calc.py": "from calc import average\n\nassert average([2, 4]) == 3, average([2, 4])\n"
                                  "assert average([5]) == 5\nprint('ok')\n"},
        "prompt": "Make `python3 test_calc.py` pass by fixing calc.py. Do not edit test_calc.py.",
        "check": ("sh", "test \"$(python3 test_calc.py)\" = ok"),
        "changes": ["calc.py"],
    },
    {
        "name": "csv_rows",
        "files": {"people.csv": "name,age\nAda,36\nLinus,54\nGrace,85\nAlan,41\nKaren,62\nDennis,70\nBarbara,58\n"},
        "prompt": "How many rows of data does people.csv have, not counting the header line?",
        "check": answer_has(r"\b7\b|\bseven\b"),
        "changes": [],
    },
    {
        "name": "read_line",
        "files": {"notes.txt": "Ship the 0.2 release on Friday\nAsk Sam about the flaky test\nBook the room for Monday\n"},
        "prompt": "What is the second line of notes.txt?",
        # The line asked for, and not the others (an answer quoting the whole file is wrong).
        "check": answer_has(r"Ask Sam about the flaky test", r"(?s)^(?!.*Ship the 0\.2)(?!.*Book the room)"),
        "changes": [],
    },
    {
        "name": "rename_constant",
        "files": {"settings.py": "TIMEOUT = 30\n",
                  "app.py": "from settings import TIMEOUT\n\n\ndef wait_time():\n    return TIMEOUT * 2\n\n\n"
                            "if __name__ == '__main__':\n    print(wait_time())\n"},
        "prompt": "Rename the constant TIMEOUT to TIMEOUT_SECONDS in settings.py and in app.py.",
        "check": py("import re, app, settings; assert settings.TIMEOUT_SECONDS == 30; assert app.wait_time() == 60; "
                    "assert not re.search(r'\\bTIMEOUT\\b', open('app.py').read() + open('settings.py').read())"),
        "changes": ["settings.py", "app.py"],
    },
]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def setup(workspace, task):
    shutil.rmtree(workspace, ignore_errors=True)
    os.makedirs(workspace)
    for name, text in task["files"].items():
        path = os.path.join(workspace, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return {name: digest(os.path.join(workspace, name)) for name in task["files"]}


def check(workspace, task, answer):
    kind, what = task["check"]
    if kind == "answer":
        return all(re.search(p, answer, re.IGNORECASE) for p in what)
    command = ["python3", "-c", what] if kind == "py" else ["bash", "-c", what]
    done = subprocess.run(command, cwd=workspace, capture_output=True, timeout=30,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return done.returncode == 0


def working_files(workspace):
    """The Python files that work: a script (with `__main__`) runs, a module imports."""
    works = set()
    for folder, _, names in os.walk(workspace):
        if ".lathe" in folder:
            continue
        for name in names:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, workspace)
            with open(path, errors="replace") as f:
                script = "__main__" in f.read()
            module = relative[:-3].replace(os.sep, ".")
            command = ["python3", relative] if script else ["python3", "-c", f"import {module}"]
            try:
                done = subprocess.run(command, cwd=workspace, capture_output=True, timeout=20,
                                      env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
            except subprocess.TimeoutExpired:
                continue
            if done.returncode == 0:
                works.add(relative)
    return works


def working_before(workspace, task, before):
    """Files that were not to change but did (a task must not break or rewrite unrelated files)."""
    changed = []
    for name, sha in before.items():
        path = os.path.join(workspace, name)
        if name in task["changes"]:
            continue
        if not os.path.exists(path) or digest(path) != sha:
            changed.append(name)
    return changed


def run_task(size, task, timeout, base, home):
    workspace = os.path.join(base, task["name"])
    before = setup(workspace, task)
    worked = working_files(workspace)
    command = ["/usr/bin/time", "-f", "%M", LATHE, "-p", task["prompt"], "--provider", "local", "--model", size,
               "--yolo", "--output-format", "stream-json", "-C", workspace]
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "LATHE_HOME": home})
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as expired:
        code, out, err = 124, expired.stdout or "", expired.stderr or ""
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    seconds = time.monotonic() - started
    events = []
    for line in out.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    result = next((e for e in reversed(events) if e.get("type") == "result"), {})
    answer = result.get("result") or ""
    guards = sum(1 for e in events if e.get("type") == "tool_result"
                 and any(mark in str(e.get("output", "")) for mark in GUARD_MARKS))
    if result.get("subtype") == "error_no_progress":
        guards += 1
    rss_lines = [l for l in err.strip().splitlines() if l.strip().isdigit()]
    rss_mb = int(rss_lines[-1]) / 1024 if rss_lines else 0.0
    passed = code == 0 and check(workspace, task, answer)
    # A Python file that worked before (ran or imported) and does not now, after a run that
    # reported success, is "broken and reported success".
    touched = working_before(workspace, task, before)
    broken = sorted(worked - working_files(workspace))
    broken_success = code == 0 and bool(broken)
    calls = [(e.get("name"), e.get("arguments")) for e in events if e.get("type") == "tool_call"]
    return {"task": task["name"], "passed": passed, "exit": code, "subtype": result.get("subtype"),
            "seconds": round(seconds, 1), "rss_mb": round(rss_mb, 1), "guards": guards,
            "broken_success": broken_success, "broken": broken, "unrelated_changes": touched, "calls": calls,
            "answer": answer[:300]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.5b,1.5b")
    parser.add_argument("--only", default="")
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--local", action="append", default=[],
                        help="a [local] setting for every run, e.g. --local answer_bias=0 (TOML value)")
    parser.add_argument("--out", default="", help="also write each model's report to OUT-<size>.json")
    parser.add_argument("--workdir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "lathe-tasks"))
    args = parser.parse_args()
    if not os.access(LATHE, os.X_OK):
        sys.exit(f"tasks: {LATHE} not found; build it with: cargo build --release --features local")
    only = [name for name in args.only.split(",") if name]
    tasks = [t for t in TASKS if not only or t["name"] in only]
    out_dir = os.path.join(ROOT, "bench", "local", "results")
    os.makedirs(out_dir, exist_ok=True)
    summary = []
    # A Lathe home of its own: no user config or rules, sessions kept apart.
    home = os.path.join(args.workdir, ".lathe-home")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write("[local]\n" + "".join(setting + "\n" for setting in args.local))
    for size in args.sizes.split(","):
        subprocess.run([LATHE, "model", "fetch", size], check=True, capture_output=True)
        runs = []
        for task in tasks:
            run = run_task(size, task, args.timeout, args.workdir, home)
            runs.append(run)
            mark = "pass" if run["passed"] else "FAIL"
            print(f"{size:<5} {run['task']:<16} {mark}  exit={run['exit']:<3} {run['subtype'] or '-':<18} "
                  f"{run['seconds']:6.1f}s  guards={run['guards']}  {run['answer'][:70]!r}", flush=True)
        seconds = [r["seconds"] for r in runs]
        report = {
            "model": size, "tasks": len(runs), "passed": sum(r["passed"] for r in runs),
            "median_s": round(statistics.median(seconds), 1), "max_s": max(seconds),
            "peak_rss_mb": max(r["rss_mb"] for r in runs),
            "guard_fired_runs": sum(1 for r in runs if r["guards"]),
            "broken_success": sum(r["broken_success"] for r in runs),
            "load_average": os.getloadavg()[0], "local_settings": args.local, "runs": runs,
        }
        if not only and not args.local:
            with open(os.path.join(out_dir, f"tasks-{size}.json"), "w") as f:
                json.dump(report, f, indent=2)
        if args.out:
            with open(f"{args.out}-{size}.json", "w") as f:
                json.dump(report, f, indent=2)
        summary.append(report)
    print(f"\n{'model':<6} {'passed':>7} {'median_s':>9} {'max_s':>7} {'rss_MB':>7} {'guards':>7} {'broken':>7}")
    for r in summary:
        print(f"{r['model']:<6} {r['passed']:>3}/{r['tasks']:<3} {r['median_s']:>9} {r['max_s']:>7} "
              f"{r['peak_rss_mb']:>7.0f} {r['guard_fired_runs']:>7} {r['broken_success']:>7}")


if __name__ == "__main__":
    main()
