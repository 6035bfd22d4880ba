/**
 * POST /v1/rank over HTTP against the fake model: scores in parallel (scripted per item), ties at
 * the cut compared pairwise (the fake answers "A", the first of the schema's choices: the lower
 * index wins), the top k in order; bad requests refused with nothing stored.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const MODEL = "openai/gpt-6-luna";
const score = (n: number) => `json:${encodeURIComponent(JSON.stringify({ score: n }))}`;

const rankBody = (tag: string, scores: number[], k: number) => ({
  inputs: scores.map((n, i) => ({ t: `paper ${i}`, i, d: fake(tag, i, score(n)) })),
  criteria: "Most about long contexts",
  k,
  prompt_template: "{{ item.t }} {{ item.d }}",
  comparison_template: `{{ item_a.t }} or {{ item_b.t }} <<fake tag=${tag}-cmp id={{ item_a.i }}-{{ item_b.i }}>>`,
  model: MODEL,
  concurrency: 4,
  max_retries: 0,
});

describe("POST /v1/rank", () => {
  it("scores every item, compares only the items tied at the cut, and lists the top k in order", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("rank");
    const created = await call(base(), "POST", "/v1/rank", { token: key, body: rankBody(tag, [5, 8, 5, 5, 2], 2) });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ type: "rank", status: "completed" });
    // 0, 2 and 3 tie at 5 for the second place: three comparisons, paper 0 (always A) wins both of its own.
    expect(job.output).toEqual([
      { index: 1, score: 8 },
      { index: 0, score: 5, wins: 2 },
    ]);
    expect(job.stages.map((s: any) => [s.name, s.total, s.succeeded])).toEqual([
      ["score", 5, 5],
      ["compare", 3, 3],
    ]);
    expect((await fakeStats(tag)).requests).toBe(5);
    expect((await fakeStats(`${tag}-cmp`)).requests).toBe(3);
    const comparisons = await allResults(base(), key, job.id, "&stage=compare");
    expect(comparisons.map((r) => [r.input.a, r.input.b, r.output.winner])).toEqual([
      [0, 2, "A"],
      [0, 3, "A"],
      [2, 3, "A"],
    ]);
  });

  it("without a tie at the cut there is no comparison: the compare stage is skipped", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("rank-clear");
    const res = await call(base(), "POST", "/v1/rank?wait=true", { token: key, body: rankBody(tag, [1, 9, 4], 2) });
    expect(res.status).toBe(200);
    expect(res.body.output).toEqual([
      { index: 1, score: 9 },
      { index: 2, score: 4 },
    ]);
    expect(res.body.stages.map((s: any) => [s.name, s.status])).toEqual([
      ["score", "completed"],
      ["compare", "skipped"],
    ]);
  });

  it("refuses k over the inputs and a comparison template without item_b, with nothing stored", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("rank-bad");
    const overK = await call(base(), "POST", "/v1/rank", { token: key, body: rankBody(tag, [1, 2], 3) });
    expect(overK.status).toBe(400);
    expect(overK.body.error.details).toEqual([expect.objectContaining({ path: "k" })]);
    const noB = await call(base(), "POST", "/v1/rank", { token: key, body: { ...rankBody(tag, [1, 2], 1), comparison_template: "{{ item_a }}" } });
    expect(noB.status).toBe(400);
    expect(noB.body.error).toMatchObject({ code: "template_missing_variable" });
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
    expect((await fakeStats(tag)).requests).toBe(0);
  });
});
