#!/usr/bin/env python3
"""Writes crates/cli/hot-symbols.txt: the functions of the `lathe` binary that the benchmark scenarios
execute, hottest first, which the release link places together at the start of the code
(crates/cli/build.rs, `--symbol-ordering-file`).

Runs bench/harness.py's scenarios (one-turn answer, ten tool calls, ten tool calls with three MCP
servers and two hooks; over Anthropic Messages and OpenAI Responses) with `lathe` under valgrind's
callgrind, and lists every function of the binary that ran, by instructions executed in it (its own,
not its callees'). Needs valgrind and a release build (`cargo build --release -p lathe -p lathe-mock
--all-features`). Run it again after a dependency or feature change (symbol names carry a hash of the
crate's build metadata, not of its code): a symbol the list names that a build lacks is skipped, so a
stale list only costs memory. `--check` says how much of the list the release build still has.

Usage: python3 bench/hot_symbols.py [--out FILE] [--check]
"""
import argparse
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME_LINE = re.compile(r"^(c?fn|c?ob)=\((\d+)\)(?: (.*))?$")


class Profiled(harness.Lathe):
    """`lathe -p` under callgrind, writing one profile per process into `out`."""

    def __init__(self, wire, out):
        super().__init__(wire)
        self.out = out

    def command(self, url, workspace, tmp):
        argv, env = super().command(url, workspace, tmp)
        callgrind = ["valgrind", "--tool=callgrind", "--demangle=no", "--dump-instr=no",
                     f"--callgrind-out-file={self.out}/callgrind.%p"]
        return callgrind + argv, env


def self_costs(path, binary):
    """Instructions executed in each function of `binary` (mangled name) in one callgrind profile.

    Callgrind names a function or object in full the first time (`fn=(12) name`) and by number
    after (`fn=(12)`); a cost line after `calls=` is the callee's, not the current function's."""
    names, objects, costs = {}, {}, collections.Counter()
    current_object = current = None
    skip = False
    with open(path, errors="replace") as f:
        for line in f:
            if skip:
                skip = False
                continue
            found = NAME_LINE.match(line.rstrip("\n"))
            if found:
                kind, number, name = found.groups()
                table = objects if kind.endswith("ob") else names
                if name is not None:
                    table[number] = name
                if kind == "ob":
                    current_object = objects.get(number)
                elif kind == "fn":
                    current = names.get(number)
                    if current_object == binary:
                        costs[current] += 0
                continue
            if line.startswith("calls="):
                skip = True
            elif current and current_object == binary and line[:1] in "0123456789+-*":
                fields = line.split()
                if len(fields) >= 2 and fields[1].isdigit():
                    costs[current] += int(fields[1])
    return costs


def check(listing, binary):
    """Prints how many of the functions in `listing` `binary` defines; 1 when under 90 %."""
    with open(listing) as f:
        listed = [line.strip() for line in f if line.strip()]
    defined = set(subprocess.run(["nm", "--defined-only", "--format=just-symbols", binary],
                                 capture_output=True, text=True, check=True).stdout.split())
    present = sum(name in defined for name in listed)
    print(f"{present} of the {len(listed)} listed functions are in {binary}")
    return 0 if present >= 0.9 * len(listed) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "crates", "cli", "hot-symbols.txt"))
    parser.add_argument("--check", action="store_true",
                        help="only count the listed functions the release build has (exit 1 below 90 %%)")
    args = parser.parse_args()
    binary = os.path.realpath(harness.LATHE)
    if args.check:
        sys.exit(check(args.out, binary))
    with tempfile.TemporaryDirectory() as profiles:
        for wire in ("anthropic", "responses"):
            agent = Profiled(wire, profiles)
            for turns in (harness.scenario_text(), harness.scenario_ten_tools()):
                with tempfile.TemporaryDirectory() as tmp:
                    harness.run_once(turns, tmp, agent)
            if os.path.exists(harness.EVERYTHING):
                with tempfile.TemporaryDirectory() as tmp:
                    harness.run_with(harness.with_extensions, harness.scenario_ten_tools(), tmp, agent)
        total = collections.Counter()
        for path in glob.glob(os.path.join(profiles, "callgrind.*")):
            total.update(self_costs(path, binary))
    # `name'2` is callgrind's mark for a recursive call; the symbol is `name`.
    ordered = dict.fromkeys(re.sub(r"'\d+$", "", name) for name, _ in total.most_common())
    with open(args.out, "w") as f:
        f.writelines(f"{name}\n" for name in ordered)
    print(f"{len(ordered)} functions written to {args.out}")


if __name__ == "__main__":
    main()
