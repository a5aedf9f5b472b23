"""Generated tasks for the local-model suite (bench/local/suite.py): nine kinds, names and values
drawn from a seeded `random.Random`, so the same seed gives the same tasks on every machine.

A task is a dict: name, kind, split (`dev` or `test`), files ({path: text}), prompt, check (("py",
code run in the workspace) or ("answer", [regex, ...]) matched against the final answer), changes
(the files the task may change; every other file must keep its bytes).
"""
import random

NOUNS = ["order", "invoice", "ticket", "sensor", "basket", "parcel", "account", "student", "recipe",
         "flight", "planet", "garden", "meter", "shelf", "voucher", "lesson", "engine", "bridge", "canvas",
         "harbor", "pixel", "rocket", "tunnel", "violin"]
WORDS = ["Welcome", "Goodbye", "Thanks", "Warning", "Finished", "Loading", "Success", "Settings", "Message",
         "Account", "Password", "Address", "Calendar", "Weather", "Library", "Network", "Payment", "Receipt",
         "Shipping", "Balance"]
PEOPLE = ["Ann", "Bob", "Chen", "Dana", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun"]
KINDS = ["typo", "missing_import", "off_by_one", "add_function", "rename_two_files", "failing_assertion",
         "question_line", "question_defines", "question_rows"]
PER_KIND = 7
# Of each kind's tasks, the first DEV are the dev split (to tune on), the rest the test split (reported).
DEV = 4


def py(code):
    return ("py", code)


def answer_has(*patterns):
    return ("answer", list(patterns))


def typo_of(word, rnd):
    """`word` with one letter dropped or two neighbours swapped (never the first letter)."""
    while True:
        at = rnd.randrange(1, len(word) - 1)
        if rnd.random() < 0.5:
            typo = word[:at] + word[at + 1:]
        else:
            typo = word[:at] + word[at + 1] + word[at] + word[at + 2:]
        if typo != word and typo.lower() not in (w.lower() for w in WORDS):
            return typo


def filler(rnd, noun):
    """Two small unrelated functions, so a file is more than the one thing a task is about."""
    k = rnd.randint(2, 9)
    return (f"def {noun}_label(code):\n    return \"{noun.upper()}-\" + str(code)\n\n\n"
            f"def {noun}_limit():\n    return {k * 10}\n")


def typo(rnd, noun):
    word = rnd.choice(WORDS)
    wrong = typo_of(word, rnd)
    who = rnd.choice(PEOPLE)
    name = f"{noun}_messages.py"
    text = (f"def {noun}_greeting(name):\n    return \"{wrong}, \" + name + \"!\"\n\n\n" + filler(rnd, noun)
            + f"\n\nif __name__ == \"__main__\":\n    print({noun}_greeting(\"{who}\"))\n")
    return {"files": {name: text},
            "prompt": f"Fix the typo in {name}: the greeting should say {word}, not {wrong}.",
            "check": py(f"import {noun}_messages as m; r = m.{noun}_greeting('{who}'); "
                        f"assert r == '{word}, {who}!', r; assert m.{noun}_limit() > 0"),
            "changes": [name]}


IMPORTS = [
    ("math", "math.sqrt({a} * {a})", lambda a: f"{float(a)}"),
    ("json", "json.dumps({{\"n\": {a}}})", lambda a: f'{{"n": {a}}}'),
    ("statistics", "statistics.mean([{a}, {a} + 2])", lambda a: f"{a + 1}"),
    ("re", "re.sub(r\"[0-9]\", \"#\", \"a{a}b\")", lambda a: "a" + "#" * len(str(a)) + "b"),
    ("textwrap", "textwrap.dedent(\"  x{a}\")", lambda a: f"x{a}"),
    ("collections", "collections.Counter(\"{w}\").most_common(1)[0][1]", None),
]


def missing_import(rnd, noun):
    module, expr, expect = rnd.choice(IMPORTS)
    a = rnd.randint(3, 99)
    if module == "collections":
        letter = rnd.choice("abcdeg")
        count = rnd.randint(2, 4)
        word = letter * count + "xyz"
        expr, expected = expr.format(w=word), str(count)
    else:
        expr, expected = expr.format(a=a), expect(a)
    name = f"{noun}_tool.py"
    text = (filler(rnd, noun) + f"\n\ndef {noun}_value():\n    return {expr}\n\n\n"
            f"if __name__ == \"__main__\":\n    print({noun}_value())\n")
    return {"files": {name: text},
            "prompt": f"Running `python3 {name}` fails with a NameError. Fix it.",
            "check": py(f"import subprocess, sys; r = subprocess.run([sys.executable, '{name}'], "
                        f"capture_output=True, text=True); assert r.returncode == 0, r.stderr; "
                        f"assert r.stdout.strip() == {expected!r}, r.stdout"),
            "changes": [name]}


def off_by_one(rnd, noun):
    variant = rnd.randrange(3)
    name = f"{noun}_series.py"
    if variant == 0:
        m, n = rnd.randint(2, 5), rnd.randint(3, 6)
        fn = f"sum_{noun}s"
        body = (f"def {fn}(n):\n    \"\"\"Return {m}*1 + {m}*2 + ... + {m}*n.\"\"\"\n    total = 0\n"
                f"    for i in range(1, n):\n        total += {m} * i\n    return total\n")
        wrong, right = m * n * (n - 1) // 2, m * n * (n + 1) // 2
        prompt = (f"{fn} in {name} has an off-by-one bug: {fn}({n}) returns {wrong} but should return "
                  f"{right}. Fix it.")
        check = f"import {noun}_series as s; assert s.{fn}({n}) == {right}; assert s.{fn}(1) == {m}"
    elif variant == 1:
        fn = f"first_{noun}s"
        k = rnd.randint(2, 4)
        body = (f"def {fn}(items, k):\n    \"\"\"Return the first k items.\"\"\"\n    return items[:k - 1]\n")
        prompt = (f"{fn}(items, k) in {name} should return the first k items, but {fn}([1, 2, 3, 4, 5], {k}) "
                  f"returns one item too few. Fix the off-by-one bug.")
        check = (f"import {noun}_series as s; assert s.{fn}([1, 2, 3, 4, 5], {k}) == {list(range(1, k + 1))}; "
                 f"assert s.{fn}(['a', 'b'], 1) == ['a']")
    else:
        fn = f"{noun}_range"
        a = rnd.randint(1, 5)
        b = a + rnd.randint(2, 5)
        body = (f"def {fn}(start, end):\n    \"\"\"All whole numbers from start to end, both included.\"\"\"\n"
                f"    return list(range(start, end))\n")
        prompt = (f"{fn}({a}, {b}) in {name} should include {b} but it does not: an off-by-one bug. Fix it.")
        check = (f"import {noun}_series as s; assert s.{fn}({a}, {b}) == {list(range(a, b + 1))}; "
                 f"assert s.{fn}(2, 2) == [2]")
    return {"files": {name: body + "\n\n" + filler(rnd, noun)}, "prompt": prompt, "check": py(check),
            "changes": [name]}


ADDITIONS = [
    ("product_of", "(a, b)", "a times b", "{m}.product_of(3, 4) == 12 and {m}.product_of(0, 9) == 0"),
    ("larger_of", "(a, b)", "the larger of a and b", "{m}.larger_of(3, 8) == 8 and {m}.larger_of(9, 2) == 9"),
    ("repeat_text", "(text, n)", "text repeated n times",
     "{m}.repeat_text('ab', 3) == 'ababab' and {m}.repeat_text('x', 0) == ''"),
    ("average_of", "(numbers)", "the average of the list numbers",
     "{m}.average_of([2, 4, 9]) == 5 and {m}.average_of([1]) == 1"),
    ("is_even", "(n)", "True when n is even and False otherwise",
     "{m}.is_even(4) is True and {m}.is_even(7) is False"),
    ("last_item", "(items)", "the last element of the list items",
     "{m}.last_item([1, 2, 3]) == 3 and {m}.last_item(['z']) == 'z'"),
    ("square_of", "(x)", "x times x", "{m}.square_of(7) == 49 and {m}.square_of(-3) == 9"),
]


def add_function(rnd, noun):
    fn, args, what, assertion = rnd.choice(ADDITIONS)
    module = f"{noun}_utils"
    name = f"{module}.py"
    return {"files": {name: filler(rnd, noun)},
            "prompt": f"Add a function {fn}{args} to {name} that returns {what}. Keep the existing functions.",
            "check": py(f"import {module} as m; assert {assertion.format(m='m')}; "
                        f"assert m.{noun}_label(1) == '{noun.upper()}-1'"),
            "changes": [name]}


def rename_two_files(rnd, noun):
    old = f"calc_{noun}"
    new = rnd.choice([f"compute_{noun}", f"{noun}_total", f"measure_{noun}", f"get_{noun}_value"])
    m = rnd.randint(2, 9)
    lib, main = f"{noun}_lib", f"{noun}_main"
    x = rnd.randint(2, 9)
    files = {
        f"{lib}.py": f"def {old}(x):\n    return x * {m}\n\n\n" + filler(rnd, noun),
        f"{main}.py": f"from {lib} import {old}\n\n\nif __name__ == \"__main__\":\n    print({old}({x}))\n",
    }
    return {"files": files,
            "prompt": f"Rename the function {old} to {new} in {lib}.py, and update {main}.py, which uses it.",
            "check": py(f"import subprocess, sys, {lib} as l; assert l.{new}(2) == {2 * m}; "
                        f"assert not hasattr(l, '{old}'); "
                        f"assert '{old}' not in open('{lib}.py').read() + open('{main}.py').read(); "
                        f"r = subprocess.run([sys.executable, '{main}.py'], capture_output=True, text=True); "
                        f"assert r.stdout.strip() == '{x * m}', r.stdout + r.stderr"),
            "changes": [f"{lib}.py", f"{main}.py"]}


BUGS = [
    ("discount", "price, rate", "return price * (1 + rate)", "{f}(100, 0.25) == 75", "price minus rate"),
    ("fahrenheit", "celsius", "return celsius * 9 / 5 - 32", "{f}(100) == 212 and {f}(0) == 32", ""),
    ("rectangle_area", "width, height", "return width + height", "{f}(3, 4) == 12 and {f}(5, 2) == 10", ""),
    ("mean", "values", "return sum(values) / (len(values) + 1)", "{f}([2, 4, 6]) == 4", ""),
    ("percent", "part, whole", "return part / whole * 10", "{f}(1, 4) == 25", ""),
]


def failing_assertion(rnd, noun):
    fn, args, body, assertion, _ = rnd.choice(BUGS)
    module = f"{noun}_calc"
    fname = f"{noun}_{fn}"
    test = f"test_{module}.py"
    files = {
        f"{module}.py": f"def {fname}({args}):\n    {body}\n\n\n" + filler(rnd, noun),
        test: (f"from {module} import {fname}\n\n\ndef test_{fn}():\n    assert {assertion.format(f=fname)}\n\n\n"
               f"if __name__ == \"__main__\":\n    test_{fn}()\n    print(\"ok\")\n"),
    }
    return {"files": files,
            "prompt": f"`python3 {test}` fails. Fix the bug in {module}.py; do not change the test.",
            "check": py(f"import subprocess, sys; r = subprocess.run([sys.executable, '{test}'], "
                        f"capture_output=True, text=True); assert r.returncode == 0 and r.stdout.strip() == 'ok', "
                        f"r.stdout + r.stderr"),
            "changes": [f"{module}.py"]}


def question_line(rnd, noun):
    name = f"{noun}_service.py"
    functions = rnd.sample([f"load_{noun}", f"save_{noun}", f"check_{noun}", f"print_{noun}", f"count_{noun}s",
                            f"reset_{noun}"], 4)
    lines = ["\"\"\"Helpers for " + noun + "s.\"\"\"", "import os", ""]
    defined = {}
    for fn in functions:
        lines.append("")
        defined[fn] = len(lines) + 1
        lines.append(f"def {fn}(value):")
        for _ in range(rnd.randint(1, 3)):
            lines.append(f"    value = value + {rnd.randint(1, 9)}")
        lines.append("    return value")
    target = rnd.choice(functions[1:])
    return {"files": {name: "\n".join(lines) + "\n"},
            "prompt": f"Which line of {name} defines the function {target}? Answer with the line number.",
            "check": answer_has(rf"(?<![0-9]){defined[target]}(?![0-9])"),
            "changes": []}


def question_defines(rnd, noun):
    others = rnd.sample([n for n in NOUNS if n != noun], 3)
    classes = {}
    files = {}
    for part in [noun] + others:
        cls = part.capitalize() + rnd.choice(["Store", "Report", "Parser", "Queue"])
        path = f"pkg/{part}_{rnd.choice(['models', 'core', 'io'])}.py"
        files[path] = f"class {cls}:\n    def __init__(self):\n        self.items = []\n"
        classes[cls] = path
    files["pkg/__init__.py"] = ""
    target = rnd.choice(list(classes))
    base = classes[target].rsplit("/", 1)[1]
    return {"files": files,
            "prompt": f"Which file defines the class {target}?",
            "check": answer_has(rf"{base.replace('.', '[.]')}"),
            "changes": []}


def question_rows(rnd, noun):
    rows = rnd.randint(4, 14)
    name = f"{noun}s.csv"
    lines = ["id,name,amount"] + [f"{i + 1},{rnd.choice(PEOPLE)},{rnd.randint(1, 500)}" for i in range(rows)]
    return {"files": {name: "\n".join(lines) + "\n", "notes.md": f"# {noun.capitalize()}s\nData in {name}.\n"},
            "prompt": f"How many data rows, not counting the header, does {name} have?",
            "check": answer_has(rf"(?<![0-9.,]){rows}(?![0-9])"),
            "changes": []}


MAKERS = {"typo": typo, "missing_import": missing_import, "off_by_one": off_by_one, "add_function": add_function,
          "rename_two_files": rename_two_files, "failing_assertion": failing_assertion,
          "question_line": question_line, "question_defines": question_defines, "question_rows": question_rows}


def tasks(seed):
    """Every task of the suite for `seed`: PER_KIND of each kind, the first DEV of a kind in `dev`."""
    rnd = random.Random(seed)
    out = []
    for kind in KINDS:
        nouns = rnd.sample(NOUNS, PER_KIND)
        for index, noun in enumerate(nouns):
            task = MAKERS[kind](rnd, noun)
            task.update({"name": f"{kind}-{index}", "kind": kind, "split": "dev" if index < DEV else "test"})
            out.append(task)
    return out


def directories(seed, name):
    """Three workspace folder names (relative) for a task: different names, depths, a space."""
    rnd = random.Random(f"{seed}/{name}")
    word = lambda: "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 9)))
    return [f"{word()}", f"{word()}-{rnd.randint(1, 999)}/{word()}/{word()}", f"{word().capitalize()} {word()}"]
