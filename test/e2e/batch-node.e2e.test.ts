/**
 * The batch-node reference spec's test criteria (its "Test Criteria" list, numbered as there),
 * each as a test named after its number, over HTTP. Two pipelines run once (beforeAll) and most
 * criteria are read from them. Not applicable to an HTTP API: 5 (the compiler's wrapper chain);
 * 27 (a shared mutable `__llm_calls__` list) is read as its purpose here: every element's calls
 * count in the step's and the job's usage.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { allResults, call, ECHO_SCHEMA, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const MODEL = "openai/gpt-6-luna";
const json = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;
let key: string;
const tags = { b1: uniqueTag("bn1"), rest: uniqueTag("bnr"), ff: uniqueTag("bnff") };
let job: any; // the continue pipeline
let steps: Record<string, any>;
let failed: any; // the fail_fast pipeline

async function submit(body: Record<string, unknown>) {
  return call(base(), "POST", "/v1/pipelines", { token: key, body: { model: MODEL, concurrency: 8, ...body } });
}

beforeAll(async () => {
  key = (await newTenant(base())).key;
  const created = await submit({
    inputs: { list: ["a", "b", "c"], single: ["single"], objs: [{ name: "test", value: 42 }] },
    steps: [
      { id: "prev", type: "llm", prompt_template: `prev-out <<fake tag=${tags.rest}>>`, output_schema: ECHO_SCHEMA },
      {
        id: "b1",
        type: "llm",
        output_schema: ECHO_SCHEMA,
        inputs: { p: "${prev.echo}" },
        batch: { items: "${list}", error_handling: "continue" },
        prompt_template: `{{ item }} {{ p }} {{ b1 | default('no-own') }} <<fake tag=${tags.b1} id={{ item }} steps={{ '401' if item == 'b' else 'ok' }} ms={{ {'a': 300, 'b': 10, 'c': 5}[item] }}>>`,
      },
      { id: "b2", type: "llm", batch: { items: "${single}" }, prompt_template: `{{ item }} <<fake tag=${tags.rest}>>`, output_schema: ECHO_SCHEMA },
      {
        id: "b3",
        type: "llm",
        batch: { items: "${objs}", as: "obj" },
        prompt_template: `{{ obj.name }} {{ obj.value }} <<fake tag=${tags.rest}>>`,
        output_schema: ECHO_SCHEMA,
      },
      {
        id: "nulls",
        type: "llm",
        batch: { items: "${single}", error_handling: "continue" },
        prompt_template: `{{ item }} <<fake tag=${tags.rest} id=null steps=${json(null)}>>`,
        output_schema: { type: "null" },
      },
      {
        id: "after",
        type: "llm",
        prompt_template: `{{ b1.count }} {{ b2.count }} {{ item | default('absent') }} <<fake tag=${tags.rest}>>`,
        output_schema: ECHO_SCHEMA,
      },
    ],
  });
  expect(created.status).toBe(202);
  job = await waitForJob(base(), key, created.body.job_id);
  steps = Object.fromEntries((await allResults(base(), key, job.id, "&stage=steps")).map((s) => [s.step, s]));
  const ff = await submit({
    inputs: { list: ["a", "b", "c"] },
    max_retries: 0,
    steps: [
      { id: "first", type: "llm", prompt_template: `first <<fake tag=${tags.ff} id=first>>`, output_schema: ECHO_SCHEMA },
      {
        id: "each",
        type: "llm",
        batch: { items: "${list}", max_concurrent: 1 },
        prompt_template: `{{ item }} <<fake tag=${tags.ff} id={{ item }} steps={{ '401' if item == 'b' else 'ok' }}>>`,
        output_schema: ECHO_SCHEMA,
      },
      { id: "never", type: "llm", prompt_template: `never <<fake tag=${tags.ff} id=never>>` },
    ],
  });
  failed = await waitForJob(base(), key, ff.body.job_id);
}, 60_000);

const refusal = async (batch: Record<string, unknown>, inputs: Record<string, unknown> = { x: [] }) => {
  const answer = await submit({ inputs, steps: [{ id: "s", type: "llm", prompt_template: "{{ item }}", batch }] });
  return answer;
};

describe("batch-node spec, test criteria", () => {
  it("criterion 1: {items: ${x}, as: item, error_handling: fail_fast} passes validation", async () => {
    expect((await refusal({ items: "${x}", as: "item", error_handling: "fail_fast" })).status).toBe(202);
  });
  it("criterion 2: items that are not a template reference are refused", async () => {
    expect((await refusal({ items: "not_template" })).body.error.details).toContainEqual({
      path: "steps[0].batch.items",
      message: "batch.items must be a template reference",
    });
  });
  it("criterion 3: an invalid alias is refused", async () => {
    expect((await refusal({ items: "${x}", as: "123invalid" })).body.error.details).toContainEqual({
      path: "steps[0].batch.as",
      message: "batch.as must be a valid identifier",
    });
  });
  it("criterion 4: an invalid error_handling is refused", async () => {
    expect((await refusal({ items: "${x}", error_handling: "invalid" })).body.error.details).toContainEqual({
      path: "steps[0].batch.error_handling",
      message: "batch.error_handling must be 'fail_fast' or 'continue'",
    });
  });
  it("criterion 6: items resolving to [a, b, c] give 3 element executions", async () => {
    expect((await fakeStats(tags.b1)).requests).toBe(3);
    expect(steps.b1.output.count).toBe(3);
  });
  it("criterion 7: items resolving to a string are refused (at submission from the inputs, at run time from a step)", async () => {
    expect((await refusal({ items: "${x}" }, { x: "string" })).body.error.details).toContainEqual({
      path: "steps[0].batch.items",
      message: "Batch items must be an array, got string",
    });
    const t = uniqueTag("bn7");
    const created = await submit({
      steps: [
        { id: "s", type: "llm", prompt_template: `x <<fake tag=${t} steps=${json({ echo: "text", length: 4 })}>>`, output_schema: ECHO_SCHEMA },
        { id: "each", type: "llm", batch: { items: "${s.echo}" }, prompt_template: "{{ item }}" },
      ],
    });
    const ended = await waitForJob(base(), key, created.body.job_id);
    expect(ended.error).toMatchObject({ code: "step_failed", step: "each", message: "Batch items must be an array, got string" });
  });
  it("criterion 8: each element sees the shared store (an earlier step) with its alias", async () => {
    const elements = await allResults(base(), key, job.id, "&stage=b1");
    expect(elements[0].output.echo).toBe("a prev-out no-own");
  });
  it("criterion 9: the alias is not in the shared store during or after the step", async () => {
    expect(steps.after.output.echo).toBe("3 1 absent");
  });
  it("criterion 10: after the step the store holds the aggregated result only", async () => {
    expect(Object.keys(steps.b1.output).sort()).toEqual(["count", "error_count", "errors", "results", "success_count"]);
  });
  it("criterion 11: each element's result is captured from its own run", async () => {
    expect(steps.b1.output.results[2]).toEqual({ echo: "c prev-out no-own", length: 17 });
  });
  it("criterion 12: results are in input order whatever order elements finish in", async () => {
    expect(steps.b1.output.results.map((r: any) => r?.echo.split(" ")[0] ?? null)).toEqual(["a", null, "c"]); // c finished before a
  });
  it("criterion 13: with fail_fast a failing element stops the step; the store is unchanged and later steps do not run", async () => {
    expect(failed).toMatchObject({ status: "failed", error: { code: "step_failed", step: "each", index: 1 } });
    expect(failed.output.accumulated.map((a: any) => a.step)).toEqual(["first"]);
    expect((await fakeStats(tags.ff)).requests).toBe(3); // first, a, b: c and never did not run
  });
  it("criterion 14: with continue a failing element is recorded and the next one runs", async () => {
    expect(steps.b1.output.results[2]).not.toBeNull();
    expect(steps.b1.output.error_count).toBe(1);
  });
  it("criterion 15: a null result with continue is a success", async () => {
    expect(steps.nulls.output).toEqual({ results: [null], count: 1, success_count: 1, error_count: 0, errors: null });
  });
  it("criterion 16: after completion the store has the step's result under its id", async () => {
    expect(steps.after.output.echo.startsWith("3 ")).toBe(true); // `after` read b1.count
  });
  it("criterion 17: the result has count, success_count and error_count", async () => {
    expect(steps.b1.output).toMatchObject({ count: 3, success_count: 2, error_count: 1 });
  });
  it("criterion 18: errors lists {index, item, error} for the failed element", async () => {
    expect(steps.b1.output.errors).toEqual([{ index: 1, item: "b", error: expect.stringContaining("401") }]);
  });
  it("criterion 19: empty items give an empty result", async () => {
    const created = await submit({ inputs: { x: [] }, steps: [{ id: "s", type: "llm", prompt_template: "{{ item }}", batch: { items: "${x}" } }] });
    const ended = await waitForJob(base(), key, created.body.job_id);
    expect(ended.output).toEqual({ results: [], count: 0, success_count: 0, error_count: 0, errors: null });
  });
  it("criterion 20: items resolving to an object are refused: got object", async () => {
    expect((await refusal({ items: "${x}" }, { x: { not: "array" } })).body.error.details).toContainEqual({
      path: "steps[0].batch.items",
      message: "Batch items must be an array, got object",
    });
  });
  it("criterion 21: a single item gives exactly one result", async () => {
    expect(steps.b2.output.results).toHaveLength(1);
  });
  it("criterion 22: without as, the alias is item", async () => {
    expect(steps.b2.output.results[0].echo).toBe("single");
  });
  it("criterion 23: without error_handling, the step is fail_fast", async () => {
    expect(failed.error.step).toBe("each"); // `each` gave no error_handling
  });
  it("criterion 24: an object item's fields are reachable ({{ obj.name }})", async () => {
    expect(steps.b3.output.results[0].echo).toBe("test 42");
  });
  it("criterion 25: a step without batch runs once, its output unwrapped", async () => {
    expect(steps.prev.output).toEqual({ echo: "prev-out", length: 8 });
  });
  it("criterion 26: an element's alias does not leak into the store", async () => {
    expect(steps.after.output.echo.endsWith("absent")).toBe(true);
  });
  it("criterion 27: every element's calls count in the step's and the job's usage", async () => {
    const elements = await allResults(base(), key, job.id, "&stage=b1");
    const sum = elements.reduce((n, e) => n + e.usage.input_tokens, 0);
    expect(steps.b1.usage.input_tokens).toBe(sum);
    expect(job.usage.input_tokens).toBeGreaterThanOrEqual(sum);
  });
  it("criterion 28: a cross-step reference in the batch step's inputs resolves (${prev.echo})", async () => {
    expect(steps.b1.output.results[0].echo).toContain("prev-out");
  });
  it("criterion 29: several batch steps in one pipeline each keep their own result", async () => {
    expect([steps.b1.output.count, steps.b2.output.count, steps.b3.output.count, steps.nulls.output.count]).toEqual([3, 1, 1, 1]);
  });
});
