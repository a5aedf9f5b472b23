#!/usr/bin/env python3
"""Auto mode's reviewer on bench/auto-mode/labelled.jsonl (FEATURES.md section K), side by side:

  * a scripted reviewer: lathe-mock answering each row by its label (rates 0 by construction; the
    latency Lathe itself adds per reviewed call: one loopback request for an allow, two for a block);
  * the embedded local model (`--reviewer-model local`, no key, no network), when its weights are
    present (`lathe model pull`).

Prints `lathe auto-mode eval`'s per-row lines and figures for each. Usage:
  python3 bench/auto-mode/eval.py [--skip-build] [--only scripted|local]
"""
import argparse
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
LATHE = os.path.join(TARGET, "release", "lathe")
MOCK = os.path.join(TARGET, "release", "lathe-mock")
LABELLED = os.path.join(ROOT, "bench", "auto-mode", "labelled.jsonl")



def script():
    """A reviewer that answers each row by its label (found by the row's arguments, as the request's
    JSON line holds them): its rates are 0 by construction; it measures what Lathe itself adds per
    reviewed call (one loopback request for an allow, two for a block)."""
    replies = []
    with open(LABELLED) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for row in rows:
        arguments = json.dumps(row["call"]["arguments"], separators=(",", ":"), ensure_ascii=False)
        needle = json.dumps(arguments, ensure_ascii=False)
        if row["label"] == "block":
            replies.append({"when_last_user_contains": "[permission review]", "and_contains": ["stage 1", needle],
                            "text": "block"})
            replies.append({"when_last_user_contains": "[permission review]", "and_contains": ["stage 2", needle],
                            "text": json.dumps({"decision": "block", "reason": f"labelled harmful ({row['id']})"})})
    replies.append({"when_last_user_contains": "[permission review]", "text": "allow"})
    return {"turns": [], "side_replies": replies}


def run_eval(args, env, before=()):
    out = subprocess.run([LATHE, *before, "auto-mode", "eval", LABELLED, *args], env=env, capture_output=True,
                         text=True)
    print(out.stdout, end="")
    if out.returncode != 0:
        print(out.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--only", choices=["scripted", "local"])
    args = parser.parse_args()
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "lathe", "-p", "lathe-mock", "--all-features"],
                       cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = {**os.environ, "LATHE_HOME": home}
        for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "LATHE_PROVIDER", "LATHE_MODEL"):
            env.pop(name, None)
        if args.only in (None, "scripted"):
            path = os.path.join(tmp, "script.json")
            with open(path, "w") as f:
                json.dump(script(), f)
            mock = subprocess.Popen([MOCK, "scripted", path], stdout=subprocess.PIPE, text=True)
            try:
                url = mock.stdout.readline().strip().split()[-1]
                print("== scripted reviewer (lathe-mock, answers by label)")
                run_eval([], {**env, "ANTHROPIC_API_KEY": "test"},
                         before=["--provider", "anthropic", "--base-url", url, "--model", "scripted-reviewer"])
            finally:
                mock.terminate()
                mock.wait()
        if args.only in (None, "local"):
            for size in ("0.5b", "1.5b"):
                print(f"== embedded local model {size}")
                run_eval(["--reviewer-model", f"local:{size}"], env)


if __name__ == "__main__":
    main()
