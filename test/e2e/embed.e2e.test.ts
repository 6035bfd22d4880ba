/**
 * POST /v1/embed (contract v4, "Embeddings, joins, embedding blocking"), over HTTP against the
 * fake model, which serves OpenAI's `/v1/embeddings` with vectors whose similarity a test scripts
 * (`emb=NAME`: texts of one NAME point the same way): an embedding per item in its result,
 * `dimensions` honoured, usage and dollars at the model's input price, retries of a failed call,
 * OpenAI's batch API at half the price, and models that cannot embed refused with nothing stored.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeBatches, fakeStats, uniqueTag } from "./harness/context.ts";

const SMALL = 0.02; // openai/text-embedding-3-small, USD per million input tokens

const cosine = (a: number[], b: number[]) => a.reduce((n, x, i) => n + x * (b[i] as number), 0) / (Math.hypot(...a) * Math.hypot(...b));

const item = (tag: string, i: number, name: string, steps = "ok", extra = "") => `text ${i} <<fake tag=${tag} id=${i} emb=${name} steps=${steps}${extra}>>`;

describe("POST /v1/embed", () => {
  it("embeds every item: each result carries its vector, as long as asked; texts the test made alike are alike; usage and dollars at the input price", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("embed");
    const inputs = [item(tag, 0, "bikes"), item(tag, 1, "bikes"), item(tag, 2, "cars", "500,ok")];
    const created = await call(base(), "POST", "/v1/embed", { token: key, body: { inputs, model: "openai/text-embedding-3-small", dimensions: 256 } });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ type: "embed", status: "completed", succeeded: 3, failed: 0 });
    const results = (await allResults(base(), key, job.id)).sort((a, b) => a.index - b.index);
    for (const r of results) expect(r).toMatchObject({ success: true, dimensions: 256, usage: { output_tokens: 0 } });
    const [a, b, c] = results.map((r) => r.embedding as number[]);
    expect(a).toHaveLength(256);
    expect(cosine(a!, b!)).toBeGreaterThan(0.95);
    expect(Math.abs(cosine(a!, c!))).toBeLessThan(0.3);
    expect(results[2].attempts).toBe(2); // its 500 retried
    for (const r of results) expect(r.cost_usd).toBeCloseTo((r.usage.input_tokens * SMALL) / 1e6, 12);
    expect((await fakeStats(tag)).requests).toBe(4);
  });

  it("runs as lines of OpenAI's batch API (/v1/embeddings) at half the price", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("embed-batch");
    const inputs = [0, 1, 2].map((i) => item(tag, i, `n${i}`));
    const body = { inputs, model: "openai/text-embedding-3-small", execution: { mode: "batch" } };
    const job = await waitForJob(base(), key, (await call(base(), "POST", "/v1/embed", { token: key, body })).body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 3 });
    expect((await fakeStats(tag)).batched).toBe(3);
    const provider = (await fakeBatches()).find((x) => x.id === job.batches[0].provider_batch_id);
    expect(provider).toMatchObject({ requests: 3 });
    const results = await allResults(base(), key, job.id);
    for (const r of results) {
      expect(r.embedding).toHaveLength(1536);
      expect(r.cost_usd).toBeCloseTo((r.usage.input_tokens * SMALL * 0.5) / 1e6, 12);
    }
  });

  it("refuses a model that cannot embed, fallbacks, a template without item and a bad dimension, storing nothing", async () => {
    const { key } = await newTenant(base());
    const body = { inputs: ["a"], model: "openai/text-embedding-3-small" };
    const cases: [Record<string, unknown>, string][] = [
      [{ model: "anthropic/claude-haiku-4-5" }, "model"],
      [{ fallbacks: ["openai/text-embedding-3-large"] }, "fallbacks"],
      [{ template: "no item here" }, "template"],
      [{ dimensions: 0 }, "dimensions"],
      [{ temperature: 0.5 }, "temperature"],
    ];
    for (const [extra, path] of cases) {
      const res = await call(base(), "POST", "/v1/embed", { token: key, body: { ...body, ...extra } });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(JSON.stringify(res.body.error), JSON.stringify(res.body)).toContain(path);
    }
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });

  it("a dry run states the embedding calls and their dollars, no output tokens", async () => {
    const { key } = await newTenant(base());
    const inputs = Array.from({ length: 10 }, (_, i) => `a sentence of about forty characters ${i}`);
    const dry = await call(base(), "POST", "/v1/embed?dry_run=true", { token: key, body: { inputs, model: "openai/text-embedding-3-small" } });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    const estimate = dry.body.estimate ?? dry.body;
    expect(estimate).toMatchObject({ output_tokens: 0, output_tokens_max: 0 });
    expect(estimate.input_tokens).toBeGreaterThan(0);
    expect(estimate.cost_usd).toBeCloseTo((estimate.input_tokens * SMALL) / 1e6, 12);
  });
});
