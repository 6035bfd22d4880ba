/** Fanout's template engine against Python Jinja2 on a committed corpus (see jinja-corpus/generate.py). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compileTemplate } from "../../src/template/jinja";

interface Case {
  template: string;
  item: unknown;
  output?: string;
}

const corpus = JSON.parse(readFileSync(new URL("./jinja-corpus/expected.json", import.meta.url), "utf8")) as { cases: Case[] };

describe("templates render exactly as Python Jinja2 does", () => {
  it("has a corpus of at least 30 templates", () => {
    expect(new Set(corpus.cases.map((c) => c.template)).size).toBeGreaterThanOrEqual(30);
  });

  it.each(corpus.cases.map((c, i) => [i, JSON.stringify(c.template).slice(0, 60), c] as const))("case %i: %s", (_i, _name, c) => {
    expect(compileTemplate(c.template).render(c.item)).toBe(c.output);
  });
});
