/**
 * An estimate within one request's work budget: past it, the tasks not rendered are scaled from
 * the rendered ones by their inputs' sizes, and `method` says how many were rendered and how far
 * they stood from the line. The budget is counted in the renderer's steps, never in time.
 */
import { describe, expect, it } from "vitest";
import { taskEstimates } from "../../../src/engine/estimate-job";
import { summarize } from "../../../src/engine/estimate-cost";
import { fitPrompts, renderOrder, sizeOf, spreadOrder } from "../../../src/engine/estimate-sample";
import { INVOCATION_RENDER_STEPS, WorkBudget } from "../../../src/engine/work-budget";
import { DEFAULT_RENDER_LIMITS } from "../../../src/template/render-budget";
import { mapOperator } from "../../../src/operators/map/plan";
import { compileTemplate } from "../../../src/template/jinja";
import { base, call } from "./specs";

const mapSpec = (template: string) => ({ ...base("map"), call: call(template) });

function estimate(template: string, inputs: unknown[], work?: WorkBudget) {
  const spec = mapSpec(template);
  const tasks = taskEstimates(mapOperator, spec, mapOperator.plan(spec, inputs), DEFAULT_RENDER_LIMITS, work);
  return { tasks, summary: summarize(tasks) };
}

describe("the order of a sample", () => {
  it("is a permutation spread over each stage, the stages taken in turn", () => {
    for (const n of [0, 1, 2, 3, 10, 97, 100, 1_000]) expect([...spreadOrder(n)].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
    const first = spreadOrder(1_000).slice(0, 10);
    expect(Math.max(...first) - Math.min(...first)).toBeGreaterThan(500); // the first ten are not bunched at the start
    expect(
      renderOrder(["a", "a", "a", "b", "b"])
        .slice(0, 2)
        .map((i) => (i < 3 ? "a" : "b")),
    ).toEqual(["a", "b"]);
  });
});

describe("a line through the rendered prompts", () => {
  it("fits tokens = a + b × size, and falls back to chars/4 through the mean for one size", () => {
    const fit = fitPrompts([
      { size: 100, tokens: 35 },
      { size: 200, tokens: 60 },
      { size: 400, tokens: 110 },
    ]);
    expect(fit?.b).toBeCloseTo(0.25, 5);
    expect(fit?.a).toBeCloseTo(10, 5);
    expect(fit?.spread).toBeCloseTo(0, 5);
    expect(fitPrompts([{ size: 100, tokens: 40 }])).toMatchObject({ b: 0.25, a: 15 });
    expect(fitPrompts([])).toBeNull();
  });

  it("measures a shared object once", () => {
    const shared = { text: "x".repeat(1_000) };
    const seen = new WeakMap<object, number>();
    const one = sizeOf({ a: shared }, seen);
    expect(sizeOf({ a: shared, b: shared }, seen)).toBeGreaterThan(one); // counted by reference, not walked again
    expect(seen.get(shared)).toBe(2 + "text".length + 4 + 1_000 + 2);
  });
});

describe("an estimate within one request's work budget", () => {
  // ~40 steps of loop per render; items of sizes that vary 1 to 40×.
  const heavy = "{% for i in range(8) %}-{% endfor %}Summarize: {{ item.text }}";
  const inputs = Array.from({ length: 400 }, (_, i) => ({ text: "word ".repeat(10 + (i % 40) * 10) }));

  it("renders everything while the budget lasts, and says nothing of samples", () => {
    const { tasks } = estimate(heavy, inputs.slice(0, 20));
    expect(tasks.notes.join("; ")).not.toMatch(/prompts rendered within/);
    expect(tasks.tasks.every((t) => t.exact !== null)).toBe(true);
  });

  it("past the budget renders a sample, scales the rest, stays near the full render's figure and says so in method", () => {
    const full = estimate(heavy, inputs).summary;
    const work = new WorkBudget(2_000); // a few dozen renders' worth
    const sampled = estimate(heavy, inputs, work);
    const rendered = sampled.tasks.tasks.filter((t) => t.exact !== null).length;
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(inputs.length / 2);
    expect(work.steps).toBeLessThan(2_000 + DEFAULT_RENDER_LIMITS.maxSteps); // the last render may pass the budget by itself at most
    expect(sampled.summary.method).toMatch(new RegExp(`${rendered} of 400 prompts rendered within one request's CPU bound.*±\\d+%`));
    expect(sampled.summary.calls).toBe(400);
    expect(Math.abs(sampled.summary.input_tokens - full.input_tokens) / full.input_tokens).toBeLessThan(0.05);
  });

  it("bounds the characters it renders as well as the steps", () => {
    const big = Array.from({ length: 50 }, () => ({ text: "y".repeat(100_000) }));
    const work = new WorkBudget(INVOCATION_RENDER_STEPS, 500_000);
    const { tasks } = estimate("{{ item.text }}", big, work);
    expect(tasks.tasks.filter((t) => t.exact !== null).length).toBe(5);
    expect(tasks.tasks[30]?.input_tokens).toBeGreaterThan(24_000); // scaled: ~100,000 characters / 4
  });

  it("charges the steps of a render that fails, and counts a stage with no render from its template and input", () => {
    const work = new WorkBudget(1);
    const template = compileTemplate("{% for i in range(10) %}{{ i }}{% endfor %}{{ item }}");
    template.renderVars({ item: "a" }, work);
    expect(work.spent).toBe(true);
    const failing = new WorkBudget();
    expect(() =>
      compileTemplate("{% for i in range(item) %}{% endfor %}", "prompt_template", "item", { ...DEFAULT_RENDER_LIMITS, maxSteps: 50 }).renderVars(
        { item: 1_000 },
        failing,
      ),
    ).toThrow();
    expect(failing.steps).toBeGreaterThan(0);
    const none = estimate("Summarize: {{ item.text }}", inputs.slice(0, 3), new WorkBudget(0));
    expect(none.summary.method).toMatch(/0 of 3 prompts rendered.*1 stage with no prompt rendered counted at the template's and the input's characters \/ 4/);
    expect(none.summary.input_tokens).toBeGreaterThan(0);
  });
});
