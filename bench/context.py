#!/usr/bin/env python3
"""Context-management benchmarks for `lathe -p` against the scripted model server (lathe-mock).

Measures (token counts are lathe-mock's: ceil(compact JSON request body bytes / 4)):
  * the 300-read session of issue 10: a model reads 300 distinct ~5 KB files, one per turn, against a
    mock enforcing a 32 000-token window with the providers' real context-length errors. Reported for
    Anthropic and OpenAI Chat, with pruning on (the default) and off (`context_pruning = false`):
    exit code, requests, total input tokens sent, the largest request, compactions and prunings;
  * the first request's system prompt + tool schemas with every built-in tool, in bytes (the JSON of
    Anthropic's `system` and `tools`) and tokens; target <= 12 KB (FEATURES.md section N).

Usage: python3 bench/context.py [--profile release|debug] [--skip-build] [--files N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
TASK = "Read every file under src/ one by one and report the checksum line of each."
MARKER = "[context compaction] Summarize the conversation so far."
SUMMARY = ("## User's task and constraints\nRead every file under src/.\n## Verified facts\nChecksum lines found.\n"
           "## Files changed\nNone.\n## Commands run\nNone.\n## Open problems\nNone.\n## Next step\nRead the next file.")
WINDOW = 32000


def seed(workspace, count):
    os.makedirs(os.path.join(workspace, "src"), exist_ok=True)
    for i in range(count):
        text = "file %03d: checksum %08x\n" % (i, i * 2654435761 % 4294967291)
        line = 0
        while len(text) < 5000:
            text += "%03d.%03d the quick brown fox jumps over the lazy dog %d\n" % (i, line, i * line)
            line += 1
        with open(os.path.join(workspace, "src", "f%03d.txt" % i), "w") as f:
            f.write(text)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "seed"]):
        subprocess.run(["git", *args], cwd=workspace, env=env, check=True)


def script(count):
    turns = [{"tool_calls": [{"id": "call_%03d" % i, "name": "read_file",
                              "arguments": {"path": "src/f%03d.txt" % i}}],
              "usage": {"output_tokens": 30}} for i in range(count)]
    turns.append({"text": "All files read.", "usage": {"output_tokens": 5}})
    return {"context_window": WINDOW, "check_pairing": True,
            "side_replies": [{"when_last_user_contains": MARKER, "text": SUMMARY}], "turns": turns}


def run(bins, provider, pruning, count, tmp):
    workspace = os.path.join(tmp, "ws")
    home = os.path.join(tmp, "home")
    os.makedirs(home, exist_ok=True)
    seed(workspace, count)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write("context_window = %d\ncontext_pruning = %s\n[retry]\nmax_retries = 0\n"
                % (WINDOW, "true" if pruning else "false"))
    script_path = os.path.join(tmp, "script.json")
    log = os.path.join(tmp, "requests.jsonl")
    with open(script_path, "w") as f:
        json.dump(script(count), f)
    mock = subprocess.Popen([bins["mock"], "--log", log, "scripted", script_path], stdout=subprocess.PIPE, text=True)
    try:
        url = mock.stdout.readline().strip().split()[-1]
        base = url if provider == "anthropic" else url + "/v1"
        out = subprocess.run([bins["lathe"], "-p", TASK, "--provider", provider, "--base-url", base, "-C", workspace,
                              "--output-format", "stream-json", "--max-turns", str(count + 10)],
                             env={**os.environ, "LATHE_HOME": home}, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL)
    finally:
        mock.terminate()
        mock.wait()
    events = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    requests = [json.loads(line) for line in open(log)] if os.path.exists(log) else []
    sizes = [-(-len(json.dumps(r["body"], separators=(",", ":"), ensure_ascii=False).encode()) // 4)
             for r in requests]
    result = events[-1] if events else {}
    return {
        "exit": out.returncode,
        "requests": len(requests),
        "rejected": sum(1 for r in requests if r["status"] != 200),
        "input_tokens": result.get("usage", {}).get("input_tokens"),
        "largest_request_tokens": max(sizes) if sizes else None,
        "compactions": sum(1 for e in events if e.get("type") == "compacted"),
        "prunings": sum(1 for e in events if e.get("type") == "context_pruned"),
    }, requests


def prefix_size(request):
    body = request["body"]
    system = json.dumps(body.get("system"), separators=(",", ":"), ensure_ascii=False).encode()
    tools = json.dumps(body.get("tools"), separators=(",", ":"), ensure_ascii=False).encode()
    total = len(system) + len(tools)
    return {"system_bytes": len(system), "tools_bytes": len(tools), "bytes": total, "tokens": -(-total // 4),
            "tools": len(body.get("tools") or [])}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", default="release", choices=["release", "debug"])
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--files", type=int, default=300)
    args = parser.parse_args()
    if not args.skip_build:
        flags = ["--release"] if args.profile == "release" else []
        subprocess.run(["cargo", "build", *flags, "-p", "lathe", "-p", "lathe-mock"], cwd=ROOT, check=True)
    bins = {"lathe": os.path.join(TARGET, args.profile, "lathe"), "mock": os.path.join(TARGET, args.profile, "lathe-mock")}
    report = {"window_tokens": WINDOW, "files": args.files, "sessions": []}
    first_request = None
    for provider in ("anthropic", "openai"):
        for pruning in (True, False):
            with tempfile.TemporaryDirectory() as tmp:
                figures, requests = run(bins, provider, pruning, args.files, tmp)
            figures.update({"provider": provider, "pruning": pruning})
            report["sessions"].append(figures)
            print(json.dumps(figures), file=sys.stderr)
            if provider == "anthropic" and first_request is None and requests:
                first_request = requests[0]
    if first_request is not None:
        report["first_request_system_and_tools"] = prefix_size(first_request)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
