/**
 * Every stage's size is bounded before it is planned (the contract's `stage_too_large`): model
 * output cannot make a map-reduce reduce stage past MAX_REDUCE_CALLS, nor a pipeline batch past a
 * job's worth of items; a batch over the pipeline's own inputs is refused at submission; and the
 * dry run of a 10,000-element batch stays linear (one render per step, not per element).
 */
import { describe, expect, it } from "vitest";
import { call, ECHO_SCHEMA, newTenant, waitForJob } from "../e2e/harness/api.ts";
import { base, fakeStats, uniqueTag } from "../e2e/harness/context.ts";

const MODEL = "openai/gpt-6-luna";
const json = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;
const MAX_ITEMS = 10_000; // MAX_ITEMS_PER_JOB of the e2e server (global-setup.ts)

describe("stages sized by model output", () => {
  it("a shuffle of 1,200 categories fails the map-reduce job with stage_too_large before any reducer runs", async () => {
    const { key } = await newTenant(base(), "groups");
    const [tm, tr] = [uniqueTag("map"), uniqueTag("red")];
    const extractions = (b: number) => Array.from({ length: 600 }, (_, i) => ({ category: `c${b}-${i}`, name: "x" }));
    const docs = [0, 1].map((b) => `doc ${b} <<fake tag=${tm} id=m${b} steps=${json(extractions(b))}>>`);
    const res = await call(base(), "POST", "/v1/map-reduce", {
      token: key,
      body: {
        inputs: docs,
        model: MODEL,
        docs_per_mapper: 1,
        reduction_strategy: "category",
        mapper: { prompt_template: "{% for d in items %}{{ d }}{% endfor %}" },
        reducer: { prompt_template: `{{ key }} {{ items | length }} <<fake tag=${tr}>>`, output_schema: ECHO_SCHEMA },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const job = await waitForJob(base(), key, res.body.job_id);
    expect(job).toMatchObject({ status: "failed", error: { code: "stage_too_large", stage: "reduce", details: { cap: 1_000, size: 1_200 } } });
    expect(job.error.message).toMatch(/1200 groups/);
    expect((await fakeStats(tm)).requests).toBe(2);
    expect((await fakeStats(tr)).requests).toBe(0);
  });

  it("a batch over a step's output of 10,001 elements fails the pipeline with stage_too_large before any element runs", async () => {
    const { key } = await newTenant(base(), "batch");
    const [tl, te] = [uniqueTag("list"), uniqueTag("each")];
    const res = await call(base(), "POST", "/v1/pipelines", {
      token: key,
      body: {
        model: MODEL,
        inputs: {},
        steps: [
          {
            id: "list",
            type: "llm",
            prompt_template: `list <<fake tag=${tl} steps=${json(Array.from({ length: MAX_ITEMS + 1 }, (_, i) => i))}>>`,
            output_schema: { type: "array" },
          },
          { id: "each", type: "llm", batch: { items: "${list}" }, prompt_template: `{{ item }} <<fake tag=${te}>>` },
        ],
      },
    });
    expect(res.status).toBe(202);
    const job = await waitForJob(base(), key, res.body.job_id);
    expect(job).toMatchObject({ status: "failed", error: { code: "stage_too_large", step: "each", details: { cap: MAX_ITEMS, size: MAX_ITEMS + 1 } } });
    expect((await fakeStats(te)).requests).toBe(0);
  });
});

describe("batches over the pipeline's inputs", () => {
  const steps = [{ id: "each", type: "llm", batch: { items: "${list}" }, prompt_template: "{{ item }}" }];

  it("are refused at submission past a job's worth of items", async () => {
    const { key } = await newTenant(base(), "inputs");
    const res = await call(base(), "POST", "/v1/pipelines", {
      token: key,
      body: { model: MODEL, inputs: { list: Array.from({ length: MAX_ITEMS + 1 }, (_, i) => i) }, steps },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: "steps[0].batch.items", message: expect.stringMatching(/10001 elements; a batch takes at most 10000/) }]);
  });

  it("estimate linearly: a dry run of 10,000 elements answers within a second", async () => {
    const { key } = await newTenant(base(), "estimate");
    const started = performance.now();
    const res = await call(base(), "POST", "/v1/pipelines?dry_run=true", {
      token: key,
      body: { model: MODEL, inputs: { list: Array.from({ length: MAX_ITEMS }, (_, i) => i) }, steps },
    });
    const ms = performance.now() - started;
    expect(res.status).toBe(200);
    expect(res.body.estimate.calls).toBe(MAX_ITEMS);
    expect(ms).toBeLessThan(1_000); // quadratic before: 2.3 s for 8,000 elements
  });
});
