#!/usr/bin/env python3
"""Renders every template of templates.json with every input through Python Jinja2 (default
settings) and writes expected.json. Re-run after editing templates.json:
    python3 test/unit/jinja-corpus/generate.py
The unit test renders the same pairs with Fanout's template engine and compares byte for byte."""
import json
import pathlib
import random

import jinja2

here = pathlib.Path(__file__).parent
corpus = json.loads((here / "templates.json").read_text())
env = jinja2.Environment()  # default settings: no trim_blocks, no lstrip_blocks, autoescape off
cases = []
for template in corpus["templates"]:
    compiled = env.from_string(template)
    for item in corpus["inputs"]:
        try:
            cases.append({"template": template, "item": item, "output": compiled.render(item=item)})
        except Exception as err:  # an input the template cannot take: not part of the corpus
            cases.append({"template": template, "item": item, "error": type(err).__name__})
# Random strings (a fixed seed) through the filters whose algorithms have the most corners:
# wordwrap (Python's textwrap), striptags (markupsafe's comment and tag removal), pprint.
rng = random.Random(7)
wrap = env.from_string("{{ s | wordwrap(w, b, none, h) }}")
strip = env.from_string("{{ s | striptags }}")
pieces = ["a", "b", "-", "--", " ", "  ", "\n", "é", "x-y", "ab-cd", ".", ",", "<", ">", "<!--", "-->", "&amp;", "&#65;"]
fuzz = []
for _ in range(400):
    s = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
    w, b, h = rng.randint(1, 12), rng.choice([True, False]), rng.choice([True, False])
    fuzz.append({"template": "{{ s | wordwrap(w, b, none, h) }}", "vars": {"s": s, "w": w, "b": b, "h": h}, "output": wrap.render(s=s, w=w, b=b, h=h)})
    fuzz.append({"template": "{{ s | striptags }}", "vars": {"s": s}, "output": strip.render(s=s)})
# pprint on random nested values: its line breaks depend on every width along the way.
pp = env.from_string("{{ v | pprint }}")
words = ["alpha", "beta gamma", "delta\nepsilon ", "x" * 30, "it's", "", "ünï ☃", "word " * 12]


def value(depth):
    kind = rng.choice(["str", "int", "float", "none", "bool"] + (["list", "dict"] * 2 if depth < 4 else []))
    if kind == "list":
        return [value(depth + 1) for _ in range(rng.randint(0, 6))]
    if kind == "dict":
        return {rng.choice(words).strip() + str(i): value(depth + 1) for i in range(rng.randint(0, 5))}
    return {"str": lambda: " ".join(rng.choice(words) for _ in range(rng.randint(1, 5))), "int": lambda: rng.randint(-10**6, 10**6),
            "float": lambda: rng.choice([0.5, 2.25, -3.125, 1e-7]), "none": lambda: None, "bool": lambda: rng.random() < 0.5}[kind]()


for _ in range(200):
    v = value(0)
    fuzz.append({"template": "{{ v | pprint }}", "vars": {"v": v}, "output": pp.render(v=v)})
(here / "fuzz.json").write_text(json.dumps(fuzz, indent=0, ensure_ascii=False) + "\n")
(here / "expected.json").write_text(json.dumps({"jinja2": jinja2.__version__, "cases": cases}, indent=1, ensure_ascii=False) + "\n")
print(f"{len(cases)} cases from {len(corpus['templates'])} templates x {len(corpus['inputs'])} inputs, {len(fuzz)} fuzz cases")
