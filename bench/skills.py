#!/usr/bin/env python3
"""Start-up cost of skills and sub-agent definitions: `lathe -p` against lathe-mock with none installed
and with SKILLS skills and AGENTS custom agents installed (half in the project's `.claude/`, half in the
user's `~/.claude/`; each skill a folder with a SKILL.md of ~4 KB and a reference file, each agent a
~2 KB Markdown file with a `tools` list).

Measured per run, the two set-ups interleaved so that machine load hits both alike:
  * start -> first request: from process start until the first model request reaches the mock (reading
    the definitions' frontmatter, building the `skill` and `task` tools, encoding the larger request);
  * CPU time (user + system) of the whole `lathe -p` process, which stays meaningful on a loaded machine;
  * the size of the first request's `tools` array (the skill listing and the agent types it carries).
The figure of FEATURES.md / issue 12 is the difference of the medians (target <= 30 ms added).

Usage: python3 bench/skills.py [--runs N] [--skills N] [--agents N] [--skip-build]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
LATHE = os.path.join(TARGET, "release", "lathe")
MOCK = os.path.join(TARGET, "release", "lathe-mock")

BODY_LINE = "Follow the team's conventions: read the relevant files first, change as little as needed, test.\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def install(workspace, user_home, skills, agents):
    for n in range(skills):
        root = workspace if n % 2 == 0 else user_home
        folder = os.path.join(root, ".claude", "skills", f"skill-{n:03}")
        description = (f"Handles task family {n} by generating, checking and fixing artefacts of kind {n}. "
                       "Use when the user mentions it.")
        write(os.path.join(folder, "SKILL.md"),
              f"---\nname: skill-{n:03}\ndescription: {description}\nallowed-tools: Read, Grep, Bash\n---\n"
              f"# Skill {n}\n\n" + BODY_LINE * 40)
        write(os.path.join(folder, "reference.md"), "# Reference\n\n" + BODY_LINE * 20)
    for n in range(agents):
        root = workspace if n % 2 == 0 else user_home
        write(os.path.join(root, ".claude", "agents", f"agent-{n:02}.md"),
              f"---\nname: agent-{n:02}\ndescription: Reviews changes of area {n} and reports problems.\n"
              f"tools: Read, Grep, Glob\nmodel: inherit\n---\nYou review area {n}.\n\n" + BODY_LINE * 20)


def seed(workspace):
    write(os.path.join(workspace, "src", "lib.rs"), "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "seed"]):
        subprocess.run(["git", *args], cwd=workspace, env=env, check=True)


def run_once(tmp, skills, agents):
    workspace = os.path.join(tmp, "ws")
    home = os.path.join(tmp, "lathe-home")
    user_home = os.path.join(tmp, "user")
    os.makedirs(home, exist_ok=True)
    os.makedirs(user_home, exist_ok=True)
    seed(workspace)
    install(workspace, user_home, skills, agents)
    script = os.path.join(tmp, "script.json")
    log = os.path.join(tmp, "requests.jsonl")
    with open(script, "w") as f:
        json.dump({"turns": [{"text": "Done.", "usage": {"input_tokens": 1200, "output_tokens": 2}}]}, f)
    mock = subprocess.Popen([MOCK, "--log", log, "scripted", script], stdout=subprocess.PIPE, text=True)
    try:
        url = mock.stdout.readline().strip().split()[-1]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.time()
        proc = subprocess.run(
            [LATHE, "-p", "do the task", "--provider", "anthropic", "--base-url", url, "-C", workspace],
            env={**os.environ, "LATHE_HOME": home, "HOME": user_home}, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            sys.exit(f"lathe failed ({proc.returncode}): {proc.stderr[-2000:]}")
        if "skipped" in proc.stderr:
            sys.exit(f"definitions were skipped: {proc.stderr[-2000:]}")
    finally:
        mock.terminate()
        mock.wait()
    requests = [json.loads(line) for line in open(log)]
    requests.sort(key=lambda r: r["seq"])
    first_ms = requests[0]["received_unix_ms"] - start * 1000.0
    cpu_ms = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000.0
    tools_bytes = len(json.dumps(requests[0]["body"].get("tools", [])))
    names = [tool["name"] for tool in requests[0]["body"].get("tools", [])]
    return first_ms, cpu_ms, tools_bytes, names


def summary(values):
    return f"median {statistics.median(values):8.2f}  min {min(values):8.2f}  max {max(values):8.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "lathe", "-p", "lathe-mock"], cwd=ROOT, check=True)
    setups = [("none installed", 0, 0), (f"{args.skills} skills + {args.agents} agents", args.skills, args.agents)]
    results = {name: ([], [], []) for name, _, _ in setups}
    for _ in range(args.runs):
        for name, skills, agents in setups:
            with tempfile.TemporaryDirectory() as tmp:
                first, cpu, size, names = run_once(tmp, skills, agents)
            if skills and "skill" not in names:
                sys.exit(f"the skill tool is missing from the first request: {names}")
            results[name][0].append(first)
            results[name][1].append(cpu)
            results[name][2].append(size)
    for name, _, _ in setups:
        firsts, cpus, sizes = results[name]
        print(f"{name} ({args.runs} runs)")
        print(f"  start -> first request (ms) {summary(firsts)}")
        print(f"  CPU time of lathe -p (ms)   {summary(cpus)}")
        print(f"  first request tools (bytes) {sizes[0]}")
    (base, _, _), (loaded, _, _) = setups
    added = statistics.median(results[loaded][0]) - statistics.median(results[base][0])
    added_cpu = statistics.median(results[loaded][1]) - statistics.median(results[base][1])
    print(f"added by {loaded}: {added:.2f} ms to the first request (median), {added_cpu:.2f} ms CPU "
          "(target <= 30 ms)")


if __name__ == "__main__":
    main()
