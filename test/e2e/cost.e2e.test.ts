/**
 * Contract v3, "Prompt caching" and "Cost in dollars", over HTTP through the real SDKs against the
 * fake model, whose usage reports the providers' prompt caches as they do (OpenAI by itself,
 * Anthropic what `cache_control` marks): dollars on results, stages and jobs from the shipped
 * prices; null for a model with no price; the cached and cache-written tokens at every level and
 * in dry runs; `token_budget.usd` refused where it cannot be kept and shown where it is.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, waitForJob } from "./harness/api.ts";
import { base, openGate, uniqueTag } from "./harness/context.ts";

const MINI = { input: 0.1, cached_input: 0.01, output: 0.5 }; // openai/gpt-6-luna, USD per million tokens
const SONNET = { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15 }; // anthropic/claude-sonnet-4-6

type Usage = { input_tokens: number; output_tokens: number; cached_input_tokens: number; cache_write_input_tokens: number };
const dollars = (u: Usage, p: { input: number; cached_input: number; cache_write?: number; output: number }) =>
  ((u.input_tokens - u.cached_input_tokens - u.cache_write_input_tokens) * p.input +
    u.cached_input_tokens * p.cached_input +
    u.cache_write_input_tokens * (p.cache_write ?? p.input) +
    u.output_tokens * p.output) /
  1e6;

/** A prefix of about `tokens` tokens that no other test sends (the fake's caches are per key and text). */
const longPrefix = (tag: string, tokens: number) =>
  `Instructions for ${tag}. ${"Read the item carefully and answer in one word. ".repeat(Math.ceil((tokens * 4) / 48))}\n`;

async function runMap(key: string, body: Record<string, unknown>) {
  const created = await call(base(), "POST", "/v1/map", { token: key, body: { concurrency: 1, max_retries: 0, ...body } });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  const job = await waitForJob(base(), key, created.body.job_id);
  return { job, results: await allResults(base(), key, job.id) };
}

describe("cost in dollars", () => {
  it("prices every result, stage and job from the provider's usage at the shipped prices, and a model with no price is null", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("cost");
    const inputs = [0, 1, 2].map((i) => `item ${i} ${fake(tag, i)}`);
    const { job, results } = await runMap(key, { inputs, prompt_template: "Say ok: {{ item }}", model: "openai/gpt-6-luna" });
    expect(job.status).toBe("completed");
    let sum = 0;
    for (const r of results) {
      expect(r.usage).toMatchObject({ cached_input_tokens: 0, cache_write_input_tokens: 0 });
      expect(r.cost_usd).toBeCloseTo(dollars(r.usage, MINI), 8);
      sum += r.cost_usd;
    }
    expect(sum).toBeGreaterThan(0);
    expect(job.cost_usd).toBeCloseTo(sum, 8);
    expect(job.stages[0].cost_usd).toBeCloseTo(sum, 8);

    const unknown = await runMap(key, { inputs: [`x ${fake(tag, "u")}`], prompt_template: "{{ item }}", model: "openai/m" });
    expect(unknown.job).toMatchObject({ status: "completed", cost_usd: null, stages: [{ cost_usd: null }] });
    expect(unknown.results[0]).toMatchObject({ success: true, cost_usd: null });
    expect(unknown.results[0].usage.input_tokens).toBeGreaterThan(0);
  });
});

describe("prompt caching", () => {
  it("marks Anthropic's shared prefix: the first call writes it, the others read it, at a tenth of the price; prompt_cache false sends no mark", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("pcache");
    const prefix = longPrefix(tag, 2_200); // Sonnet 4.6 caches prefixes of 2,048 tokens and more
    const inputs = [0, 1, 2].map((i) => `item ${i} ${fake(tag, i)}`);
    const body = { inputs, prompt_template: `${prefix}{{ item }}`, model: "anthropic/claude-sonnet-4-6" };
    const dry = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body });
    expect(dry.status).toBe(200);
    const e = dry.body.estimate;
    expect(e.cache_write_input_tokens).toBeGreaterThan(1_000);
    expect(e.cached_input_tokens).toBe(2 * e.cache_write_input_tokens);
    expect(e.cost_usd_by_mode.batch).toBeCloseTo(e.cost_usd_by_mode.realtime / 2, 7); // each rounded to 1e-8

    const { job, results } = await runMap(key, body);
    expect(job.status).toBe("completed");
    const [first, ...later] = results;
    const written = first.usage.cache_write_input_tokens;
    expect(written).toBeGreaterThan(1_000);
    expect(first.usage.cached_input_tokens).toBe(0);
    for (const r of later) expect(r.usage).toMatchObject({ cached_input_tokens: written, cache_write_input_tokens: 0 });
    for (const r of results) expect(r.cost_usd).toBeCloseTo(dollars(r.usage, SONNET), 8);
    expect(job.usage).toMatchObject({ cached_input_tokens: 2 * written, cache_write_input_tokens: written });
    expect(job.stages[0].usage).toMatchObject({ cached_input_tokens: 2 * written, cache_write_input_tokens: written });
    expect(later[0].cost_usd).toBeLessThan(first.cost_usd); // the fake echoes the prompt: its output, at $15, is most of either

    const off = await runMap(key, { ...body, inputs: [`again ${fake(tag, "off")}`], prompt_cache: false });
    expect(off.results[0].usage).toMatchObject({ cached_input_tokens: 0, cache_write_input_tokens: 0 });
  });

  it("keeps the shared part first for OpenAI, which caches it by itself: later calls report cached tokens", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("pcache-oai");
    const inputs = [0, 1].map((i) => `item ${i} ${fake(tag, i)}`);
    const { results } = await runMap(key, { inputs, system_prompt: longPrefix(tag, 1_300), prompt_template: "{{ item }}", model: "openai/gpt-6-luna" });
    expect(results[0].usage.cached_input_tokens).toBe(0);
    expect(results[1].usage.cached_input_tokens).toBeGreaterThanOrEqual(1_024);
    expect(results[1].usage.cached_input_tokens % 128).toBe(0);
    expect(results[1].cost_usd).toBeCloseTo(dollars(results[1].usage, MINI), 8);
  });
});

describe("token_budget.usd", () => {
  it("is kept by reserve-then-settle and shown beside the tokens; refused where it cannot be kept, with nothing stored", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("usd");
    const inputs = [0, 1].map((i) => `item ${i} ${fake(tag, i)}`);
    const body = { inputs, prompt_template: "{{ item }}", model: "openai/gpt-6-luna", max_tokens: 50 };
    const { job } = await runMap(key, { ...body, token_budget: { usd: 1 } });
    expect(job.status).toBe("completed");
    expect(job.budget).toMatchObject({ total: null, usd: { limit: 1, reserved: 0 } });
    expect(job.budget.usd.spent).toBeCloseTo(job.cost_usd, 8);

    const unpriced = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, model: "openai/m", token_budget: { usd: 1 } } });
    expect(unpriced.status).toBe(400);
    expect(unpriced.body.error.details).toEqual([{ path: "token_budget.usd", message: expect.stringMatching(/openai\/m has no price/) }]);
    const over = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, token_budget: { usd: 0.000001 } } });
    expect(over.status).toBe(422);
    expect(over.body.error).toMatchObject({ code: "token_budget_exceeded", details: { budget_usd: 0.000001, estimate: { cost_usd: expect.any(Number) } } });
    const empty = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, token_budget: {} } });
    expect(empty.status).toBe(400);
    const jobs = await call(base(), "GET", "/v1/jobs", { token: key });
    expect(jobs.body.jobs).toHaveLength(1); // only the first job: the refused ones stored nothing
  });
});

describe("what a running job is expected to spend", () => {
  it("projects each stage's tasks left at the mean of its finished ones, and says nothing once the job has ended", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("expected");
    // Six items of one size; the fake lets three calls through and holds the rest at its gate.
    const inputs = Array.from({ length: 6 }, (_, i) => `item ${i} <<fake tag=${tag} id=${i} gate=3>>`);
    const created = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { inputs, prompt_template: "Say ok: {{ item }}", model: "openai/gpt-6-luna", concurrency: 6, max_retries: 0 },
    });
    expect(created.status).toBe(202);
    let job = created.body;
    for (let i = 0; i < 600 && job.completed !== 3; i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await call(base(), "GET", `/v1/jobs/${created.body.job_id}`, { token: key })).body;
    }
    expect(job).toMatchObject({ status: "running", completed: 3 });
    // Half done: twice what it spent so far.
    expect(job.expected).toEqual({
      input_tokens: 2 * job.usage.input_tokens,
      output_tokens: 2 * job.usage.output_tokens,
      cost_usd: expect.closeTo(2 * job.cost_usd, 8),
    });
    await openGate(tag);
    const ended = await waitForJob(base(), key, created.body.job_id);
    expect(ended).toMatchObject({ status: "completed", expected: null });
    expect(ended.usage.input_tokens).toBe(job.expected.input_tokens); // the projection was right
  });
});
