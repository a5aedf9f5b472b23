#!/usr/bin/env python3
"""The local-model suite: generated small coding tasks, each run in three directories.

Tasks come from bench/local/generate.py (nine kinds, seeded): a typo in a string, a missing import, an
off-by-one, adding a function, a rename across two files, a failing assertion, and questions about a
file (which line, which file defines a class, how many rows). Each task is run with
`lathe -p PROMPT --provider local --model SIZE --yolo --output-format stream-json` in three workspace
folders of different names and depths, and checked by running code in the workspace (a question: by
its answer). Tune on `--split dev`; report only `--split test`.

Per model it reports:
  pass rate     a run passes when it exits 0, its check holds and no other file changed;
  false claims  runs whose check fails but which exited 0 or whose answer says fixed/done/passes (after a
                failed run, its first line: the rest quotes the failing check's output);
  median s      wall time per run; peak RSS of lathe;
  same in 3 dirs  tasks whose three runs made the same tool calls and gave the same answer;
  copied example  answers that contain a word of the local system prompt's worked example (must be 0:
                the script exits 1 otherwise).

Usage:  python3 bench/local/suite.py [--sizes 0.5b,1.5b] [--split test] [--seed 2026] [--only KIND,...]
Needs:  `lathe` built with the local model (LATHE_BIN, default target/release/lathe), models fetched
        (`lathe model fetch SIZE`), python3, /usr/bin/time. Writes bench/local/results/suite-<size>-<split>.json.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
LATHE = os.environ.get("LATHE_BIN", os.path.join(TARGET, "release", "lathe"))
CLAIM = re.compile(r"\b(fixed|done|passes|passed|works now|now works|renamed|added|corrected)\b", re.I)


def example_words():
    """The words of the local prompt's worked example (crates/core/src/prompt.rs)."""
    text = open(os.path.join(ROOT, "crates", "core", "src", "prompt.rs")).read()
    found = re.search(r"LOCAL_EXAMPLE_WORDS: \[&str; \d+\] = \[([^\]]*)\]", text)
    return [w.lower() for w in re.findall(r'"([^"]+)"', found.group(1))] if found else []


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
    kind, spec = task["check"]
    if kind == "answer":
        return all(re.search(p, answer, re.I) for p in spec)
    try:
        done = subprocess.run(["python3", "-c", spec], cwd=workspace, capture_output=True, timeout=30,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def others_changed(workspace, task, before):
    return [name for name, sha in before.items() if name not in task["changes"]
            and (not os.path.exists(os.path.join(workspace, name)) or digest(os.path.join(workspace, name)) != sha)]


def said(code, answer):
    """What a run says of itself: its answer; after a failed run only the first line, as the rest is the
    failing check's output that Lathe quotes (a test runner's "2 passed, 1 failed" is no claim)."""
    return answer if code == 0 else answer.split("\n", 1)[0]


def run_once(size, task, workspace, timeout, home):
    before = setup(workspace, task)
    command = ["/usr/bin/time", "-f", "%M", LATHE, "-p", task["prompt"], "--provider", "local", "--model", size,
               "--yolo", "--output-format", "stream-json", "-C", workspace]
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "LATHE_HOME": home})
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as expired:
        code = 124
        out = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        err = expired.stderr.decode() if isinstance(expired.stderr, bytes) else (expired.stderr or "")
    seconds = time.monotonic() - started
    events = []
    for line in out.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    result = next((e for e in reversed(events) if e.get("type") == "result"), {})
    answer = result.get("result") or ""
    rss = [int(line) for line in err.split() if line.isdigit()]
    held = check(workspace, task, answer)
    changed = others_changed(workspace, task, before)
    calls = [[e.get("name"), e.get("arguments")] for e in events if e.get("type") == "tool_call"]
    return {"passed": code == 0 and held and not changed, "check_held": held, "exit": code,
            "subtype": result.get("subtype"), "false_claim": not held and (code == 0 or bool(CLAIM.search(said(code, answer)))),
            "others_changed": changed, "seconds": round(seconds, 1), "rss_mb": round(rss[-1] / 1024, 1) if rss else 0,
            "calls": calls, "answer": answer[:400]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1.5b,0.5b")
    parser.add_argument("--split", default="test", choices=["dev", "test", "all"])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--only", default="", help="kinds, comma-separated")
    parser.add_argument("--dirs", type=int, default=3, help="directories per task (1-3)")
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--list", action="store_true", help="print the tasks and exit")
    parser.add_argument("--workdir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "lathe-suite"))
    args = parser.parse_args()
    only = [kind for kind in args.only.split(",") if kind]
    tasks = [t for t in generate.tasks(args.seed)
             if (args.split == "all" or t["split"] == args.split) and (not only or t["kind"] in only)]
    if args.list:
        for t in tasks:
            print(f"{t['split']:<5} {t['name']:<20} {t['prompt']}")
        print(f"{len(tasks)} tasks")
        return
    if not os.access(LATHE, os.X_OK):
        sys.exit(f"suite: {LATHE} not found; build it with: cargo build --release --features local")
    words = example_words()
    if not words:
        sys.exit("suite: LOCAL_EXAMPLE_WORDS not found in crates/core/src/prompt.rs")
    home = os.path.join(args.workdir, ".lathe-home")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    out_dir = os.path.join(ROOT, "bench", "local", "results")
    os.makedirs(out_dir, exist_ok=True)
    copied_total = 0
    for size in args.sizes.split(","):
        subprocess.run([LATHE, "model", "fetch", size], check=True, capture_output=True)
        rows = []
        for task in tasks:
            runs = []
            for folder in generate.directories(args.seed, task["name"])[:args.dirs]:
                run = run_once(size, task, os.path.join(args.workdir, size, folder), args.timeout, home)
                run["dir"] = folder
                runs.append(run)
                copied = [w for w in words if w in run["answer"].lower() and w not in task["prompt"].lower()]
                run["copied_example"] = copied
                mark = "pass" if run["passed"] else ("CLAIM" if run["false_claim"] else "fail")
                print(f"{size:<5} {task['name']:<20} {mark:<5} exit={run['exit']:<3} {run['seconds']:6.1f}s "
                      f"{folder[:28]:<28} {run['answer'][:60]!r}", flush=True)
            same = all(r["calls"] == runs[0]["calls"] and r["answer"] == runs[0]["answer"] for r in runs)
            rows.append({"task": task["name"], "kind": task["kind"], "prompt": task["prompt"], "same_in_dirs": same,
                         "runs": runs})
        every = [r for row in rows for r in row["runs"]]
        copied = sum(1 for r in every if r["copied_example"])
        copied_total += copied
        by_kind = {}
        for row in rows:
            kind = by_kind.setdefault(row["kind"], [0, 0])
            kind[0] += sum(r["passed"] for r in row["runs"])
            kind[1] += len(row["runs"])
        report = {
            "model": size, "split": args.split, "seed": args.seed, "tasks": len(rows), "runs": len(every),
            "passed": sum(r["passed"] for r in every), "false_claims": sum(r["false_claim"] for r in every),
            "median_s": round(statistics.median(r["seconds"] for r in every), 1),
            "max_s": max(r["seconds"] for r in every), "peak_rss_mb": max(r["rss_mb"] for r in every),
            "same_in_dirs": sum(row["same_in_dirs"] for row in rows), "copied_example": copied,
            "by_kind": {k: f"{p}/{n}" for k, (p, n) in by_kind.items()},
            "load_average": os.getloadavg()[0], "rows": rows,
        }
        if not only:
            with open(os.path.join(out_dir, f"suite-{size}-{args.split}.json"), "w") as f:
                json.dump(report, f, indent=2)
        n = report["runs"]
        print(f"\n{size} {args.split}: passed {report['passed']}/{n} ({100 * report['passed'] / n:.0f} %), "
              f"false claims {report['false_claims']}/{n} ({100 * report['false_claims'] / n:.1f} %), "
              f"median {report['median_s']} s, max {report['max_s']} s, peak RSS {report['peak_rss_mb']:.0f} MB, "
              f"same in all dirs {report['same_in_dirs']}/{len(rows)}, copied example {copied}")
        print("  by kind: " + ", ".join(f"{k} {v}" for k, v in report["by_kind"].items()), flush=True)
    if copied_total:
        sys.exit(f"suite: {copied_total} answers copy the system prompt's worked example")


if __name__ == "__main__":
    main()
