"""Codex CLI as a peer in bench/harness.py (`--peers codex`).

Installs `@openai/codex` from npm into bench/.peers/codex (once; `CODEX_VERSION` picks another version)
and runs `codex exec` against the same lathe-mock as Lathe, as a custom model provider over the
Responses wire API. Codex needs no key beyond a dummy environment variable. Each run gets a fresh
CODEX_HOME in the run's temporary directory, as Lathe gets a fresh LATHE_HOME.

The npm package's `codex` command is a Node script that spawns the native binary it ships
(vendor/<target>/bin/codex); the bench runs that binary directly, which leaves Node's start-up and
memory out of Codex's figures.

Codex's model works through one shell tool, `exec_command` (and `apply_patch` given as a command),
so each of Lathe's tool calls in a scenario becomes one `exec_command` call doing the same work
(see `translate`): the same number of model turns, the same files read and written.
"""
import glob
import os
import shlex
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = os.environ.get("CODEX_VERSION", "0.171.0")
PREFIX = os.path.join(os.path.dirname(HERE), ".peers", f"codex-{VERSION}")

NAME = f"codex {VERSION}"


def binary():
    """The native `codex` binary in the npm install, installing it first when missing."""
    pattern = os.path.join(PREFIX, "node_modules", "@openai", "codex-*", "vendor", "*", "bin", "codex")
    found = glob.glob(pattern)
    if not found:
        os.makedirs(PREFIX, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", PREFIX, "--no-audit", "--no-fund", "--no-save",
                        f"@openai/codex@{VERSION}"], check=True, stdout=subprocess.DEVNULL)
        found = glob.glob(pattern)
    if not found:
        raise SystemExit(f"npm installed @openai/codex@{VERSION} but no native binary matches {pattern}")
    return found[0]


def command(url, workspace, tmp):
    """argv and environment of one headless Codex run against the mock at `url`."""
    home = os.path.join(tmp, "codex-home")
    os.makedirs(home, exist_ok=True)
    argv = [binary(), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
            "-C", workspace, "-m", "mock-model",
            "-c", "model_provider=mock",
            "-c", "model_providers.mock.name=mock",
            "-c", f'model_providers.mock.base_url="{url}/v1"',
            "-c", "model_providers.mock.wire_api=responses",
            "-c", "model_providers.mock.env_key=MOCK_API_KEY",
            "do the task"]
    return argv, {**os.environ, "CODEX_HOME": home, "MOCK_API_KEY": "dummy"}


def translate(name, args, files):
    """The shell command that does what Lathe's tool `name` does with `args`; `files` holds the
    workspace's text files by path as the scenario goes (edits and writes are applied to it)."""
    q = shlex.quote
    if name == "read_file":
        if "offset" in args:
            first = args["offset"]
            return f"sed -n {first},{first + args.get('limit', 2000) - 1}p {q(args['path'])}"
        return f"cat {q(args['path'])}"
    if name == "grep":
        flag = "-rl" if args.get("output_mode") == "files" else "-rn"
        return f"grep {flag} {q(args['pattern'])} {q(args.get('path', '.'))} --exclude-dir=.git"
    if name == "glob":
        return f"find . -path ./.git -prune -o -name {q(args['pattern'].split('/')[-1])} -print"
    if name == "list_dir":
        return f"ls -la {q(args['path'])}"
    if name == "shell":
        return args["command"]
    if name == "write_file":
        files[args["path"]] = args["content"]
        return f"printf %s {q(args['content'])} > {q(args['path'])}"
    if name == "edit_file":
        # apply_patch replaces whole lines: the lines holding the old text, and the same lines edited.
        text = files[args["path"]]
        start = text.rfind("\n", 0, text.index(args["old_string"])) + 1
        end = text.find("\n", text.index(args["old_string"]) + len(args["old_string"]))
        end = len(text) if end < 0 else end
        before = text[start:end]
        after = before.replace(args["old_string"], args["new_string"], 1)
        files[args["path"]] = text[:start] + after + text[end:]
        old = "\n".join("-" + line for line in before.split("\n"))
        new = "\n".join("+" + line for line in after.split("\n"))
        return (f"apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: {args['path']}\n@@\n"
                f"{old}\n{new}\n*** End Patch\nPATCH")
    raise ValueError(f"no Codex equivalent for tool {name}")


def turns(lathe_turns, files):
    """The script `lathe_turns` with every tool call turned into an `exec_command` call; `files`: the
    seeded workspace's text files by path."""
    files = dict(files)
    out = []
    for turn in lathe_turns:
        turn = dict(turn)
        if "tool_calls" in turn:
            turn["tool_calls"] = [{"id": c["id"], "name": "exec_command",
                                   "arguments": {"cmd": translate(c["name"], c["arguments"], files)}}
                                  for c in turn["tool_calls"]]
        out.append(turn)
    return out
