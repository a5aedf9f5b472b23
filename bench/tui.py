#!/usr/bin/env python3
"""Terminal UI benchmarks: the real `lathe` binary in a tmux pane against the scripted model server.

  * frame time while streaming 5 000 tokens of Markdown (paragraphs, lists, tables, code blocks) at
    80x24: every frame's draw time is logged by the UI (LATHE_LOG, target lathe::tui::frame) and the
    log is summarised (frames, median, p99, max, frames over 16 ms);
  * peak RSS of the UI after a 200-turn scripted session: 200 prompts typed one after the other, each
    answered with ~150 tokens of Markdown (every tenth with a read_file call first); VmHWM of the
    lathe process read from /proc before /quit.

Usage: python3 bench/tui.py [--skip-build] [--turns N] [--tokens N]
Targets (issue 7): no frame over 16 ms; <= 40 MB peak RSS after 200 turns.
Needs tmux (scripts/install-build-deps.sh installs it).
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
LATHE = os.path.join(TARGET, "release", "lathe")
MOCK = os.path.join(TARGET, "release", "lathe-mock")

WORDS = ("the parser reads each line of input and keeps the state of the current block until a blank "
         "line ends it while the renderer wraps words to the width of the terminal").split()


def markdown(tokens):
    """About `tokens` tokens (4 characters each) of mixed Markdown."""
    parts, size, i = [], 0, 0
    while size < tokens * 4:
        kind = i % 5
        if kind == 0:
            text = f"## Step {i}\n\n" + " ".join(WORDS[(i + j) % len(WORDS)] for j in range(60)) + ".\n\n"
        elif kind == 1:
            text = "".join(f"- item {j}: `value_{j}` is **kept** and *checked*\n" for j in range(6)) + "\n"
        elif kind == 2:
            text = "```rust\n" + "".join(
                f"fn step_{i}_{j}(input: &str) -> Option<usize> {{ input.find(\"{j}\") }}\n" for j in range(8)
            ) + "```\n\n"
        elif kind == 3:
            text = "| name | value | note |\n|---|---|---|\n" + "".join(
                f"| row {j} | {j * 7} | fine |\n" for j in range(5)) + "\n"
        else:
            text = "> " + " ".join(WORDS[(i * 3 + j) % len(WORDS)] for j in range(40)) + "\n\n"
        parts.append(text)
        size += len(text)
        i += 1
    return "".join(parts)


class Pane:
    def __init__(self, workdir, script, width=80, height=24):
        self.socket = os.path.join(workdir, "tmux.sock")
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", str(width), "-y", str(height), script)

    def tmux(self, *args, capture=False):
        result = subprocess.run(["tmux", "-S", self.socket, *args], check=True, capture_output=True, text=True)
        return result.stdout if capture else None

    def type(self, text):
        self.tmux("send-keys", "-t", "bench", "-l", text)

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "bench", *keys)

    def capture(self):
        return self.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "bench", capture=True)

    def wait_for(self, needle, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            text = self.capture()
            if needle in text:
                return text
            time.sleep(0.02)
        raise SystemExit(f"timed out waiting for {needle!r}; pane:\n{self.capture()}")

    def pid(self):
        return int(self.tmux("display-message", "-p", "-t", "bench", "#{pane_pid}", capture=True).strip())

    def close(self):
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True)


def start_mock(workdir, turns):
    path = os.path.join(workdir, "turns.json")
    with open(path, "w") as f:
        json.dump({"turns": turns}, f)
    mock = subprocess.Popen([MOCK, "scripted", path], stdout=subprocess.PIPE, text=True)
    url = mock.stdout.readline().strip().split()[-1]
    return mock, url


def pane_script(workdir, url, extra_env):
    home = os.path.join(workdir, "home")
    ws = os.path.join(workdir, "ws")
    os.makedirs(home, exist_ok=True)
    os.makedirs(os.path.join(ws, "src"), exist_ok=True)
    with open(os.path.join(ws, "src", "lib.rs"), "w") as f:
        f.write("pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n")
    env = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in extra_env.items())
    script = os.path.join(workdir, "pane.sh")
    with open(script, "w") as f:
        f.write(f"#!/bin/sh\nexport LATHE_HOME={shlex.quote(home)}\n{env}cd {shlex.quote(ws)}\n"
                f"exec {shlex.quote(LATHE)} --provider anthropic --base-url {shlex.quote(url)} --yolo\n")
    os.chmod(script, 0o755)
    return script


def frame_time(tokens):
    with tempfile.TemporaryDirectory() as workdir:
        text = markdown(tokens) + "\n\nEND-OF-ANSWER"
        chunks = max(1, len(text) // 4)
        mock, url = start_mock(workdir, [{"text": text, "text_chunks": chunks, "chunk_delay_ms": 1,
                                          "usage": {"input_tokens": 1000, "output_tokens": chunks}}])
        log = os.path.join(workdir, "frames.log")
        script = pane_script(workdir, url, {"LATHE_LOG": log, "LATHE_LOG_LEVEL": "lathe::tui::frame=debug"})
        pane = Pane(workdir, script)
        try:
            pane.wait_for("bypass")
            pane.type("write it all")
            pane.keys("Enter")
            pane.wait_for("END-OF-ANSWER", timeout=300)
            pane.type("/quit")
            pane.keys("Enter")
            time.sleep(0.5)
        finally:
            pane.close()
            mock.terminate()
        frames = [int(m.group(1)) / 1000.0 for m in re.finditer(r"frame_us=(\d+)", open(log).read())]
    frames.sort()
    p99 = frames[min(len(frames) - 1, int(len(frames) * 0.99))]
    print(f"frame time, {tokens} tokens of Markdown streamed at 80x24 ({chunks} deltas): {len(frames)} frames, "
          f"median {statistics.median(frames):.2f} ms, p99 {p99:.2f} ms, max {frames[-1]:.2f} ms, "
          f"over 16 ms: {sum(1 for f in frames if f > 16)}")
    return frames[-1]


def peak_rss(turn_count):
    with tempfile.TemporaryDirectory() as workdir:
        turns = []
        for i in range(turn_count):
            if i % 10 == 0:
                turns.append({"tool_calls": [{"id": f"call_{i}", "name": "read_file",
                                              "arguments": {"path": "src/lib.rs"}}]})
            turns.append({"text": markdown(150) + f"\n\nANSWER-{i}-DONE",
                          "usage": {"input_tokens": 2000 + 40 * i, "output_tokens": 150}})
        mock, url = start_mock(workdir, turns)
        pane = Pane(workdir, pane_script(workdir, url, {}))
        try:
            pane.wait_for("bypass")
            started = time.time()
            for i in range(turn_count):
                pane.type(f"prompt number {i}")
                pane.keys("Enter")
                pane.wait_for(f"ANSWER-{i}-DONE")
            elapsed = time.time() - started
            status = open(f"/proc/{pane.pid()}/status").read()
            hwm = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))
            rss = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))
            pane.type("/quit")
            pane.keys("Enter")
            time.sleep(0.5)
        finally:
            pane.close()
            mock.terminate()
    print(f"peak RSS after a {turn_count}-turn session: {hwm / 1024:.1f} MB (current {rss / 1024:.1f} MB; "
          f"{elapsed:.1f} s for the turns)")
    return hwm / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=5000)
    args = parser.parse_args()
    if subprocess.run(["tmux", "-V"], capture_output=True).returncode != 0:
        sys.exit("tmux is needed (scripts/install-build-deps.sh installs it)")
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-p", "lathe", "-p", "lathe-mock"], cwd=ROOT, check=True)
    worst = frame_time(args.tokens)
    peak = peak_rss(args.turns)
    print(f"targets: max frame {worst:.2f} ms (<= 16), peak RSS {peak:.1f} MB (<= 40)")


if __name__ == "__main__":
    main()
