/** Fanout's template engine against Python Jinja2 on a committed corpus (see jinja-corpus/generate.py). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compileTemplate } from "../../src/template/jinja";

interface Case {
  template: string;
  item: unknown;
  output?: string;
  error?: string; // Python raised this: the render must fail too
}

const corpus = JSON.parse(readFileSync(new URL("./jinja-corpus/expected.json", import.meta.url), "utf8")) as { cases: Case[] };

describe("templates render exactly as Python Jinja2 does", () => {
  it("has a corpus of at least 30 templates", () => {
    expect(new Set(corpus.cases.map((c) => c.template)).size).toBeGreaterThanOrEqual(30);
  });

  it.each(corpus.cases.map((c, i) => [i, JSON.stringify(c.template).slice(0, 60), c] as const))("case %i: %s", (_i, _name, c) => {
    const template = compileTemplate(c.template, "prompt_template", []);
    if (c.error) expect(() => template.render(c.item), `Python raised ${c.error}`).toThrow();
    else expect(template.render(c.item)).toBe(c.output);
  });
});

const fuzz = JSON.parse(readFileSync(new URL("./jinja-corpus/fuzz.json", import.meta.url), "utf8")) as {
  template: string;
  vars: Record<string, unknown>;
  output: string;
}[];

describe("wordwrap, striptags and pprint on random values render exactly as Python Jinja2 does", () => {
  it.each(fuzz.map((c, i) => [i, JSON.stringify(c.vars).slice(0, 60), c] as const))("fuzz %i: %s", (_i, _name, c) => {
    expect(compileTemplate(c.template, "t", []).renderVars(c.vars)).toBe(c.output);
  });
});
