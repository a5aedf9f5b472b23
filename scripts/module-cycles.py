#!/usr/bin/env python3
"""Finds import cycles between the modules (files) of a crate.

Usage: scripts/module-cycles.py crates/core/src [more crate src dirs...]

A file depends on another when it names an item of that module through `crate::`, `super::` or
`self::` paths (in `use` lines or in code). Re-exports (`pub use`, `pub(crate) use`) and `mod`
declarations are not dependencies: a parent that only re-exports its children does not depend on
them. Test files (`*_tests.rs`, `tests.rs`) and `#[cfg(test)]` modules are left out. Prints each
cycle (a strongly connected set of files) and exits 1 when there is one.
"""
import os
import re
import sys

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{", re.S)


def module_files(src):
    """Maps module paths (tuples) to files."""
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if not name.endswith(".rs") or name.endswith("_tests.rs") or name == "tests.rs":
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel in (["lib"], ["main"]):
                rel = []
            elif rel[-1] == "mod":
                rel = rel[:-1]
            files[tuple(rel)] = path
    # `#[path = "x.rs"] mod name;` inside a file: the file is a child module.
    for module, path in list(files.items()):
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)', text):
            child = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
            for other, other_path in list(files.items()):
                if os.path.normpath(other_path) == child:
                    del files[other]
                    files[module + (m.group(2),)] = other_path
    return files


def reexports(text):
    """Maps each name a file re-exports (`pub use path::Name;`) to (anchor, segments)."""
    found = {}
    for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]*);", text, flags=re.S):
        body = re.sub(r"\s+", "", m.group(1))
        g = re.match(r"(.*?)::\{(.*)\}$", body)
        items = [(g.group(1), i) for i in re.split(r",(?![^{]*\})", g.group(2))] if g else [(None, body)]
        for prefix, item in items:
            full = f"{prefix}::{item}" if prefix else item
            full = full.split("as")[0] if "::" in full and " as " in m.group(1) else full
            segs = full.split("::")
            if not segs or "{" in full or "*" in full:
                continue
            anchor = segs[0] if segs[0] in ("crate", "super", "self") else "self"
            rest = segs[1:] if segs[0] in ("crate", "super", "self") else segs
            found[segs[-1]] = (anchor, rest)
    return found


def strip(text):
    """Drops comments, strings, `#[cfg(test)]` modules and re-export lines."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    text = "".join(out)
    text = re.sub(r"\bpub(?:\([^)]*\))?\s+use\s+[^;]*;", "", text, flags=re.S)
    return text


def paths_in(text):
    """Yields (anchor, segments) for each path, expanding one level of `use a::{b, c::d}`."""
    for m in USE_GROUP.finditer(text):
        anchor, prefix = m.group(1), [s for s in m.group(2).split("::") if s]
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        body = text[m.end():j - 1]
        for item in re.split(r",(?![^{]*\})", body):
            segs = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", item.split(" as ")[0].split("{")[0])
            if segs:
                yield anchor, prefix + segs
    for m in PATH.finditer(text):
        yield m.group(1), [s for s in m.group(2).split("::") if s]


def resolve(files, here, anchor, segs, exports=None, depth=0):
    """The deepest module file a path names (following re-exports), or None."""
    if anchor == "crate":
        base = []
    elif anchor == "self":
        base = list(here)
    else:
        base = list(here[:-1])
        while segs and segs[0] == "super":
            base, segs = base[:-1], segs[1:]
    module = tuple(base)
    for i, seg in enumerate(segs):
        if seg in ("super", "self"):
            break
        if module + (seg,) in files:
            module = module + (seg,)
            continue
        if exports and depth < 8 and seg in exports.get(module, {}):
            anchor2, segs2 = exports[module][seg]
            target = resolve(files, module, anchor2, segs2 + segs[i + 1:], exports, depth + 1)
            if target is not None:
                return target
        break
    return module if module in files else None


def cycles(src):
    files = module_files(src)
    edges = {m: set() for m in files}
    exports = {m: reexports(open(p, encoding="utf-8").read()) for m, p in files.items()}
    for module, path in files.items():
        text = strip(open(path, encoding="utf-8").read())
        children = {m[-1] for m in files if len(m) == len(module) + 1 and m[:-1] == module}
        found = list(paths_in(text))
        for m in re.finditer(r"(?<![:\w])([a-z_][a-z0-9_]*)((?:::[A-Za-z_][A-Za-z0-9_]*)+)", text):
            if m.group(1) in children:
                found.append(("self", [m.group(1)] + [s for s in m.group(2).split("::") if s]))
        for anchor, segs in found:
            target = resolve(files, module, anchor, segs, exports)
            if target is not None and target != module:
                edges[module].add(target)
    # Tarjan's strongly connected components.
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            visit(v)
    return [[files[m] for m in sorted(comp)] for comp in out], edges, files


def main():
    found = False
    for src in sys.argv[1:]:
        comps, edges, files = cycles(src)
        for comp in comps:
            found = True
            print(f"import cycle in {src}: {len(comp)} files")
            names = {files[m]: m for m in files}
            for path in comp:
                deps = sorted(files[t] for t in edges[names[path]] if files[t] in comp)
                print(f"  {path} -> {', '.join(deps)}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
