/**
 * Hostile templates: each either is refused at submission (an InputError, 400) or fails its render
 * with a TemplateLimitError — quickly, without exhausting memory or the stack.
 */
import { describe, expect, test } from "vitest";
import { InputError } from "../../src/lib/errors";
import { TemplateLimitError } from "../../src/template/render-budget";
import { compileTemplate } from "../../src/template/jinja";
import { cpuMs } from "./timed";

const ITEM = { n: 10 ** 7, s: "a".repeat(5_000), l: Array.from({ length: 90_000 }, (_, i) => i) };
const RENDER_BUDGET_MS = 250; // CPU time (timed.ts): the slowest bounded render takes ~0.1 s here; room for a slower CI core

function renderFailure(source: string): { error: unknown; ms: number } {
  const template = compileTemplate(source);
  const started = cpuMs();
  try {
    template.render(ITEM);
    return { error: null, ms: cpuMs() - started };
  } catch (error) {
    return { error, ms: cpuMs() - started };
  }
}

describe("refused at submission: visible without an item", () => {
  test.each([
    ["{% for x in range(10**7) %}{% endfor %}{{ item }}", /10000000 (items|iterations)/],
    ["{{ range(0, 10**9, 2) | length }}{{ item }}", /range\(\) of 500000000 items/],
    ["{% for a in range(1000) %}{% for b in range(1000) %}{% endfor %}{% endfor %}{{ item }}", /nested loops run 1000000 iterations/],
    ["{% for x in range(30000) %}{{ x }}{% endfor %}{{ item }}", /nested loops run 30000 iterations/],
    // A filter whose constant arguments alone are over the budget, whatever it is applied to (its declared cost).
    ["{{ item | slice(100000000) }}", /slice\(\) would produce a list of 100000000 elements/],
    ["{{ 'x' | center(1000000000) }}{{ item }}", /center\(\) would produce 1000000000 characters/],
    ["{{ item.s | indent(10**9, first=true) }}", /indent\(\) would produce/],
    ["{% filter center(10**9) %}{{ item }}{% endfilter %}", /center\(\) would produce/],
  ])("%s", (source, message) => {
    let error: unknown;
    try {
      compileTemplate(source);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InputError); // the edge answers 400
    expect((error as InputError).message).toMatch(message);
  });
});

describe("bounded at render time: a clean item failure", () => {
  test.each([
    ["{% for x in range(item.n) %}{% endfor %}{{ item }}", /range\(\) would produce a list of 10000000 elements; at most 100000/],
    ["{% for x in item.l %}{{ x }}{% endfor %}", /a loop of 90000 iterations/],
    ["{% for x in item.l[:19000] %}{{ x }}{% endfor %}", /more than 100000 steps/],
    ["{% set s = 'aaaaaaaaaa' %}{% for i in range(60) %}{% set s = s ~ s %}{% endfor %}{{ s }}{{ item }}", /a string of \d+ characters/],
    ["{% set xs = [1] %}{% for i in range(40) %}{% set xs = xs + xs %}{% endfor %}{{ item }}", /a list of \d+ elements/],
    ["{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}{{ item }}", /deeper than 300 levels/],
    ["{{ item.s.replace('a', item.s) }}", /replace\(\) would produce 25000000 characters/],
    ["{{ item.s | replace('a', item.s) }}", /replace\(\) would produce 25000000 characters/],
    ["{{ item.s.replace('', item.s) }}", /replace\(\) would produce/],
    ["{{ 'x' | center(item.n * 100) }}{{ item }}", /center\(\) would produce 1000000000 characters/],
    ["{{ item.s | indent(item.n, true) }}", /indent\(\) would produce/],
    ["{{ item.l | slice(item.n * 10) | list }}", /slice\(\) would produce a list of 100000000 elements/],
    ["{{ [1, 2, 3] | slice(item.n * 10) }}", /slice\(\) would produce a list of 100000000 elements/],
    ["{{ item.l | batch(item.n, 'x') | list }}", /batch\(\) would produce a list of \d{8} elements/],
    ["{{ [item.s] | map('wordwrap', 1, wrapstring=item.s) | list }}", /wordwrap\(\) would produce 25010000 characters/],
    ["{{ item | tojson(indent=100000000) }}", /tojson\(\) would produce/],
    ["{{ item.s | wordwrap(1, wrapstring=item.s) }}", /wordwrap\(\) would produce 25010000 characters/],
    ["{{ item.l | select('in', item.l) | list }}", /select\(\) is over the limit/],
    ["{{ item.l | reject('eq', item.l) | list }}", /reject\(\) is over the limit/],
    ["{{ range(20000) | map('string') | list | selectattr('0', 'in', item.l) | list }}{{ item }}", /selectattr\(\) is over the limit/],
    ["{% for x in item.l[:15000] %}{{ x is in item.l }}{% endfor %}", /the test 'in' is over the limit|more than 100000 steps/],
    ["{{ item.l | map('string') | groupby(0) | length }}", /(groupby|string)\(\) is over the limit/],
  ])("%s", (source, message) => {
    const { error, ms } = renderFailure(source);
    expect(error).toBeInstanceOf(TemplateLimitError);
    expect((error as Error).message).toMatch(message);
    expect(ms).toBeLessThan(RENDER_BUDGET_MS);
  });
});

describe("within the limits, templates render as before", () => {
  test("a list of 90,000 numbers joins; a loop of 10,000 iterations runs", () => {
    expect(compileTemplate("{{ item.l | join(',') }}").render(ITEM).length).toBeGreaterThan(90_000);
    expect(compileTemplate("{% for x in item.l[:10000] %}.{% endfor %}").render(ITEM)).toBe(".".repeat(10_000));
    expect(compileTemplate("{{ item.s.replace('a', 'bb') | length }}").render(ITEM)).toBe("10000");
  });

  test("list and text filters on large values: linear, and within the step budget", () => {
    const tags = "<p>x</p> ".repeat(100_000);
    const started = cpuMs();
    expect(compileTemplate("{{ item | striptags | length }}").render(tags)).toBe(String(100_000 * 2 - 1)); // "x x x …"
    expect(compileTemplate("{{ item.l | unique | list | length }}").render(ITEM)).toBe("90000");
    expect(compileTemplate("{{ item.l[:20000] | select('divisibleby', 7) | list | length }}").render(ITEM)).toBe("2858");
    expect(compileTemplate("{{ item.l[:30000] | map('string') | unique | list | length }}").render(ITEM)).toBe("30000");
    const nested = Array.from({ length: 2_000 }, (_, i) => ({ k: [i, { d: "x".repeat(50), e: [[[i]]] }] }));
    expect(compileTemplate("{{ item | pprint | length }}").render(nested)).toMatch(/^\d{6}$/);
    expect(cpuMs() - started).toBeLessThan(4 * RENDER_BUDGET_MS);
  });

  test("wordwrap is linear: a 250,000-character word at width 1 (quadratic before: 16.6 s for 40,000)", () => {
    for (const [n, template] of [
      [40_000, "{{ item | wordwrap(1) | length }}"],
      [250_000, "{{ [item] | map('wordwrap', 1) | first | length }}"],
    ] as const) {
      const started = cpuMs();
      expect(compileTemplate(template).render("x".repeat(n))).toBe(String(2 * n - 1));
      expect(cpuMs() - started).toBeLessThan(4 * RENDER_BUDGET_MS);
    }
  });

  test("functions render as Python would, never as source code", () => {
    expect(compileTemplate("{{ range }}|{{ item }}").render("x")).toBe("<function>|x");
    expect(compileTemplate("{% macro m() %}{% endmacro %}{{ m }}{{ item }}").render("x")).toBe("<function>x");
  });

  test("limits are per deployment", () => {
    const tight = { maxRange: 10, maxSteps: 1_000, maxDepth: 50, maxOutputChars: 100 };
    expect(() => compileTemplate("{% for x in range(11) %}{% endfor %}{{ item }}", "p", "item", tight)).toThrow(InputError);
    expect(() => compileTemplate("{{ item }}", "p", "item", tight).render("y".repeat(101))).toThrow(TemplateLimitError);
  });
});
