/**
 * The join as a pipeline step over two lists of the shared store (`left_from`, `right_from`;
 * contract v4, "Embeddings, joins, embedding blocking"), over HTTP against the fake: its pairs
 * found when the step starts, from the pipeline's inputs or an earlier step's value, blocked by
 * keys or by embeddings (its stages `<id>/embed`, …), its value the join's output; the bounds and
 * the fields a step cannot take refused at submission with nothing stored.
 */
import { describe, expect, it } from "vitest";
import { call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { COMPANIES_LEFT, COMPANIES_RIGHT, SAME_ID_PAIRS, sameIdPredicate } from "./harness/companies.ts";

const json = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;
const MODEL = "openai/gpt-6-luna";
const LEFT = COMPANIES_LEFT.slice(0, 2); // IBM and Acme
const RIGHT = COMPANIES_RIGHT;
const predicate = sameIdPredicate;

/** An llm step whose value is `{items: RIGHT}` (a list the join reads from the store). */
const listStep = (tag: string) => ({
  id: "names",
  type: "llm",
  prompt_template: `List <<fake tag=${tag}-list id=list steps=${json({ items: RIGHT })}>>`,
  output_schema: { type: "object", properties: { items: { type: "array" } }, required: ["items"] },
});

async function pipeline(key: string, steps: unknown[], inputs: Record<string, unknown> = { left: LEFT, right: RIGHT }) {
  return call(base(), "POST", "/v1/pipelines", { token: key, body: { model: MODEL, concurrency: 4, inputs, steps } });
}

/** The pipeline accepted (202) and ended. */
async function ended(key: string, steps: unknown[]) {
  const created = await pipeline(key, steps);
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return waitForJob(base(), key, created.body.job_id);
}

describe("pipeline join steps", () => {
  it("joins two lists of the store, one of them an earlier step's value: every pair judged once, the output the join's", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("pipe-join");
    const steps = [listStep(tag), { id: "matched", type: "join", left_from: "${left}", right_from: "${names.items}", predicate_template: predicate(tag) }];
    const job = await ended(key, steps);
    expect(job).toMatchObject({
      status: "completed",
      output: {
        pairs: SAME_ID_PAIRS,
        strategy: "pairs",
        comparisons: 6,
        failed: 0,
      },
    });
    expect((await fakeStats(tag)).requests).toBe(6);
    expect(job.stages.map((s: any) => s.name)).toContain("matched/items");
  });

  it("lists known only when the step starts are checked then: over max_comparisons, the step fails and judges nothing", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("pipe-join-over");
    const steps = [
      listStep(tag),
      { id: "matched", type: "join", left_from: "${left}", right_from: "${names.items}", predicate_template: predicate(tag), max_comparisons: 5 },
    ];
    const job = await waitForJob(base(), key, (await pipeline(key, steps)).body.job_id);
    expect(job).toMatchObject({ status: "failed", output: { failed_step: "matched" }, error: { code: "too_many_comparisons" } });
    expect((await fakeStats(tag)).requests).toBe(0);
  });

  it("an embedding blocking inside the step: each left item judged with its nearest right items only", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("pipe-join-emb");
    const steps = [
      {
        id: "matched",
        type: "join",
        left_from: "${left}",
        right_from: "${right}",
        predicate_template: predicate(tag),
        blocking: { method: "embedding", model: "openai/text-embedding-3-small", keys: ["name"], top_k: 2 },
      },
    ];
    const job = await ended(key, steps);
    expect(job).toMatchObject({
      status: "completed",
      output: {
        pairs: SAME_ID_PAIRS,
        comparisons: 2,
        embeddings_failed: 0,
      },
    });
    expect((await fakeStats(tag)).requests).toBe(2);
    expect(job.stages.map((s: any) => [s.name, s.total])).toEqual(
      expect.arrayContaining([
        ["matched/embed", 5],
        ["matched/neighbours", 5],
        ["matched/items", 2],
      ]),
    );
  });

  it("refuses at submission what a join step cannot run, storing nothing", async () => {
    const { key } = await newTenant(base());
    const join = { id: "j", type: "join", left_from: "${left}", right_from: "${right}", predicate_template: predicate("never") };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ strategy: "auto" }, 400, "strategy"],
      [{ inputs_from: "${left}" }, 400, "inputs_from"],
      [{ left: LEFT }, 400, "steps[0].left"],
      [{ right_from: undefined }, 400, "right_from"],
      [{ max_comparisons: 5 }, 422, "too_many_comparisons"],
      [{ right_from: "${nothing}" }, 400, "right_from"],
    ];
    for (const [extra, status, says] of cases) {
      const res = await pipeline(key, [{ ...join, ...extra }]);
      expect(res.status, JSON.stringify(extra)).toBe(status);
      expect(JSON.stringify(res.body.error), JSON.stringify(extra)).toContain(says);
    }
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });
});
