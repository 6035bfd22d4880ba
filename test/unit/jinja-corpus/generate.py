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
# wordwrap (Python's textwrap) and striptags (markupsafe's comment and tag removal).
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
(here / "fuzz.json").write_text(json.dumps(fuzz, indent=0, ensure_ascii=False) + "\n")
(here / "expected.json").write_text(json.dumps({"jinja2": jinja2.__version__, "cases": cases}, indent=1, ensure_ascii=False) + "\n")
print(f"{len(cases)} cases from {len(corpus['templates'])} templates x {len(corpus['inputs'])} inputs, {len(fuzz)} fuzz cases")
