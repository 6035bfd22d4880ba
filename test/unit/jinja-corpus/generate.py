#!/usr/bin/env python3
"""Renders every template of templates.json with every input through Python Jinja2 (default
settings) and writes expected.json. Re-run after editing templates.json:
    python3 test/unit/jinja-corpus/generate.py
The unit test renders the same pairs with Fanout's template engine and compares byte for byte."""
import json
import pathlib

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
(here / "expected.json").write_text(json.dumps({"jinja2": jinja2.__version__, "cases": cases}, indent=1, ensure_ascii=False) + "\n")
print(f"{len(cases)} cases from {len(corpus['templates'])} templates x {len(corpus['inputs'])} inputs")
