/**
 * Contract v3 `execution.mode: "batch"` over HTTP, through the real SDKs against the fake's batch
 * APIs (OpenAI Batch: files + batches; Anthropic Message Batches): the calls go out as lines of
 * provider batches and none realtime; each line is validated like a realtime answer (an invalid
 * one goes into a later batch with guidance), an expired line counts as an attempt and goes again
 * (`expired` once max_retries is spent), a refused one fails; results cost half; the job shows its
 * batches and the stream their events; cancel cancels the provider batch; a provider without a
 * batch API is refused (`auto` runs it realtime).
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, openEvents, readSse, waitForJob, waitForStatus } from "./harness/api.ts";
import { base, fakeBatches, fakeStats, openGate, uniqueTag } from "./harness/context.ts";

const MINI = { input: 0.1, output: 0.5 }; // openai/gpt-6-luna, USD per million tokens
const SCHEMA = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };

describe("execution mode batch", () => {
  it("runs every call as a line of an OpenAI batch at half the price: invalid lines go again with guidance, expired ones count, refused ones fail", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-oai");
    const steps = ["ok", "prose,ok", "expire,ok", "expire", "400"];
    const body = {
      inputs: steps.map((s, i) => `item ${i} ${fake(tag, i, s)}`),
      prompt_template: "Answer: {{ item }}",
      model: "openai/gpt-6-luna",
      output_schema: SCHEMA,
      max_retries: 1,
      execution: { mode: "batch" },
    };
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 3, failed: 2, total_attempts: 8, execution: { mode: "batch", deadline_secs: 86_400 } });
    const stats = await fakeStats(tag);
    expect(stats.batched).toBe(stats.requests); // no call went realtime
    expect(stats.requests).toBe(8);
    expect(job.batches.length).toBe(2); // the first five lines, then the three that go again
    expect(job.batches[0]).toMatchObject({
      stage: "items",
      status: "ended",
      requests: 5,
      provider_batch_id: expect.stringMatching(/^batch_/),
      submitted_at: expect.any(String),
      ended_at: expect.any(String),
    });
    expect(job.batches[1]).toMatchObject({ requests: 3, status: "ended" });

    const results = await allResults(base(), key, job.id);
    expect(results.map((r) => [r.success, r.error_kind, r.attempts])).toEqual([
      [true, null, 1],
      [true, null, 2],
      [true, null, 2],
      [false, "expired", 2],
      [false, "llm_error", 1],
    ]);
    expect(stats.prompts.filter((p) => p.includes("Problems with your previous response")).length).toBe(1); // the retry of the invalid line carried guidance
    for (const r of results.filter((x) => x.success)) {
      expect(r.cost_usd).toBeCloseTo(((r.usage.input_tokens * MINI.input + r.usage.output_tokens * MINI.output) / 1e6) * 0.5, 7); // rounded to 1e-8
    }

    const events = (await readSse(await openEvents(base(), key, job.id))).map((e) => e.event);
    expect(events.filter((e) => e === "BATCH_SUBMITTED")).toHaveLength(2);
    expect(events.filter((e) => e === "BATCH_ENDED")).toHaveLength(2);
    expect(events.indexOf("BATCH_ENDED")).toBeLessThan(events.indexOf("MAP_ITEM_COMPLETED")); // the batch ended, then its lines' results
    expect(events.at(-1)).toBe("MAP_COMPLETED");
  });

  it("runs Anthropic Message Batches the same way, a filter's cheaper and main calls included", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-ant");
    const body = {
      inputs: [0, 1, 2].map((i) => ({ title: `paper ${i}`, d: fake(tag, i, i === 1 ? "bad,ok" : "ok") })),
      predicate_template: "Is this about translation? {{ item.title }} {{ item.d }}",
      model: "anthropic/claude-haiku-4-5",
      max_retries: 1,
      execution: { mode: "batch" },
    };
    const created = await call(base(), "POST", "/v1/filter", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 3, output: { kept: [0, 1, 2], dropped: 0, failed: 0 } });
    const stats = await fakeStats(tag);
    expect(stats.batched).toBe(stats.requests);
    expect(stats.requests).toBe(4);
    expect(job.batches.map((b: { provider_batch_id: string; requests: number }) => [b.provider_batch_id.startsWith("msgbatch_"), b.requests])).toEqual([
      [true, 3],
      [true, 1],
    ]);
    expect(job.cost_usd).toBeGreaterThan(0);
  });

  it("runs a pipeline llm step's batch elements and a rank's scores as provider batches; the step without execution runs realtime", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-steps");
    const pipeline = {
      model: "openai/gpt-6-luna",
      inputs: { topics: ["a", "b", "c"] },
      steps: [
        { id: "each", type: "llm", prompt_template: `Say {{ t }} ${fake(tag, "each")}`, batch: { items: "${topics}", as: "t" }, execution: { mode: "batch" } },
        { id: "sum", type: "llm", prompt_template: `Sum up {{ each }} ${fake(tag, "sum")}` },
      ],
    };
    const created = await call(base(), "POST", "/v1/pipelines", { token: key, body: pipeline });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job.status).toBe("completed");
    expect(job.batches.map((b: { stage: string; requests: number }) => [b.stage, b.requests])).toEqual([["each", 3]]);
    const stats = await fakeStats(tag);
    expect([stats.requests, stats.batched]).toEqual([4, 3]); // the three elements batched, the summary realtime

    const rank = await call(base(), "POST", "/v1/rank?wait=true", {
      token: key,
      body: {
        inputs: [1, 5, 3].map((n, i) => fake(tag, `r${i}`, `json:${encodeURIComponent(JSON.stringify({ score: n }))}`)),
        criteria: "high",
        k: 2,
        prompt_template: "{{ item }}",
        model: "anthropic/claude-haiku-4-5",
        execution: { mode: "batch" },
      },
    });
    expect(rank.body).toMatchObject({
      status: "completed",
      output: [
        { index: 1, score: 5 },
        { index: 2, score: 3 },
      ],
    });
    expect(rank.body.batches).toHaveLength(1);
  });

  it("recover re-submits only what failed, as a new provider batch", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-recover");
    const body = {
      inputs: [0, 1, 2].map((i) => `item ${i} ${fake(tag, i, i === 1 ? "400,ok" : "ok")}`),
      prompt_template: "{{ item }}",
      model: "openai/gpt-6-luna",
      max_retries: 0,
      execution: { mode: "batch" },
    };
    const job = await waitForJob(base(), key, (await call(base(), "POST", "/v1/map", { token: key, body })).body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 2, failed: 1 });
    expect((await call(base(), "POST", `/v1/jobs/${job.id}/recover`, { token: key })).body).toMatchObject({ recovering: 1 });
    const again = await waitForJob(base(), key, job.id);
    expect(again).toMatchObject({ status: "completed", succeeded: 3, failed: 0 });
    expect(again.batches.map((b: { requests: number; status: string }) => [b.requests, b.status])).toEqual([
      [3, "ended"],
      [1, "ended"],
    ]);
    expect(await fakeStats(tag)).toMatchObject({ requests: 4, batched: 4 });
  });

  it("cancels the provider batch when the job is cancelled", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-cancel");
    const body = {
      inputs: [`x <<fake tag=${tag} id=0 steps=ok batch_ms=600000>>`],
      prompt_template: "{{ item }}",
      model: "openai/gpt-6-luna",
      execution: { mode: "batch" },
    };
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    const running = await waitForBatch(key, created.body.job_id);
    const cancel = await call(base(), "POST", `/v1/jobs/${created.body.job_id}/cancel`, { token: key });
    expect(cancel.status).toBe(202);
    const job = await waitForStatus(base(), key, created.body.job_id, ["cancelled"]);
    expect(job.status).toBe("cancelled");
    const provider = (await fakeBatches()).find((b) => b.id === running.provider_batch_id);
    expect(provider?.cancelled).toBe(true);
  });

  it("a cancel while the provider is creating the batch cancels that batch at the provider once its id comes back", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-cancel-create");
    const body = {
      inputs: [`x <<fake tag=${tag} id=0 steps=ok batch_ms=600000 create_gate=1>>`],
      prompt_template: "{{ item }}",
      model: "openai/gpt-6-luna",
      execution: { mode: "batch" },
    };
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    expect(created.status).toBe(202);
    // The provider has the batch; its answer to the creation is held, so the job's batch is still `submitting`.
    const ours = async () => (await fakeBatches()).find((b) => b.tags.includes(tag));
    await expect.poll(async () => (await ours())?.id ?? null, { timeout: 30_000 }).not.toBeNull();
    expect((await call(base(), "POST", `/v1/jobs/${created.body.job_id}/cancel`, { token: key })).status).toBe(202);
    expect((await waitForStatus(base(), key, created.body.job_id, ["cancelled"])).status).toBe("cancelled");
    await openGate(tag); // the provider's answer comes back, after the cancel
    await expect
      .poll(async () => (await call(base(), "GET", `/v1/jobs/${created.body.job_id}`, { token: key })).body.batches?.[0]?.provider_batch_id ?? null, {
        timeout: 30_000,
      })
      .not.toBeNull();
    const job = (await call(base(), "GET", `/v1/jobs/${created.body.job_id}`, { token: key })).body;
    const provider = await ours();
    expect(job.batches[0].provider_batch_id).toBe(provider?.id); // the batch the provider created while the job was cancelled…
    await expect.poll(async () => (await ours())?.cancelled).toBe(true); // …is cancelled at the provider, not left to run and bill
  });

  it("auto: near the deadline the batch is cancelled; the lines the provider finished are results, only the stragglers run realtime", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-auto");
    // Lines 0 and 1 are done at the fake's batch delay (300 ms); line 2 would take ten minutes.
    const inputs = [0, 1, 2].map((i) => `item ${i} <<fake tag=${tag} id=${i} steps=ok${i === 2 ? " batch_ms=600000" : ""}>>`);
    // Three items at concurrency 16, calls of at most 4 s: realtime needs 4 s and the cancel's grace 1.5 s (a quarter of the deadline), so the move comes at 0.5 s of a 6 s deadline.
    const body = { inputs, prompt_template: "{{ item }}", model: "openai/gpt-6-luna", timeout_secs: 4, execution: { mode: "auto", deadline_secs: 6 } };
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 3, execution: { mode: "auto", deadline_secs: 6 } });
    const ended = Date.parse(job.completed_at) - Date.parse(job.created_at);
    expect(ended).toBeGreaterThanOrEqual(500); // batch first: the move came at its planned time, not at once
    const provider = (await fakeBatches()).find((b) => b.id === job.batches[0].provider_batch_id);
    expect(provider, JSON.stringify(provider)).toMatchObject({ requests: 3, cancelled: true });
    const stats = await fakeStats(tag);
    expect(stats.batched).toBe(2); // the two lines the batch finished are results; the straggler ran realtime
    const results = await allResults(base(), key, job.id);
    expect(results.map((r) => r.success)).toEqual([true, true, true]);
    const price = (r: { usage: { input_tokens: number; output_tokens: number } }) =>
      (r.usage.input_tokens * MINI.input + r.usage.output_tokens * MINI.output) / 1e6;
    expect(results.slice(0, 2).map((r) => r.attempts)).toEqual([1, 1]);
    expect(results[0].cost_usd).toBeCloseTo(price(results[0]) * 0.5, 7); // the batch's price
    expect(results[2].cost_usd).toBeCloseTo(price(results[2]), 7); // realtime
    expect(job.usage.duplicated).toEqual({ input_tokens: 0, output_tokens: 0, cost_usd: 0 });
  });

  it("auto: a slow cancel's lines run realtime after a grace; a line the provider bills after that counts as duplicated, never as a second result", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-auto-slow");
    // No line is done in time; the cancel takes 4 s (past the grace), and line 0 was under way (billed all the same).
    const inputs = [0, 1].map((i) => `item ${i} <<fake tag=${tag} id=${i} steps=ok batch_ms=600000 cancel_ms=4000${i === 0 ? " on_cancel=ok" : ""}>>`);
    // The move at 0.5 s of a 6 s deadline (calls of at most 4 s, and a grace of a quarter of the deadline: 1.5 s).
    const body = { inputs, prompt_template: "{{ item }}", model: "openai/gpt-6-luna", timeout_secs: 4, execution: { mode: "auto", deadline_secs: 6 } };
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 2 });
    const results = await allResults(base(), key, job.id);
    // The cancelled batch ends after the job: its line billed for nothing is counted as it comes in.
    const billed = await until(async () => {
      const now = (await call(base(), "GET", `/v1/jobs/${job.id}`, { token: key })).body;
      return now.usage.duplicated.input_tokens > 0 ? now : null;
    });
    expect(billed.usage.input_tokens).toBe(job.usage.input_tokens); // the results' tokens: the line is not one of them
    const sum = results.reduce((n, r) => n + r.cost_usd, 0);
    expect(billed.cost_usd).toBeCloseTo(sum + billed.usage.duplicated.cost_usd, 7);
    expect((await fakeStats(tag)).batched).toBe(1); // the one line billed after its item ran realtime
    // The grace (1.5 s) did not wait for the 4 s cancel: the job ended before its cancelled batch did.
    expect(Date.parse(billed.batches[0].ended_at)).toBeGreaterThan(Date.parse(job.completed_at));
  });

  it("auto: the lines the provider finished are kept, not paid twice — the move leaves the cancelled batch a grace within the deadline", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-auto-kept");
    // Lines 0 and 1 are done at once, line 2 never; a cancel takes 1 s. Deadline 8 s, calls of at most 2 s:
    // the move comes at 4 s (2 s for the realtime calls, 2 s of grace), so the cancelled batch's answer comes
    // before its lines leave for realtime. (With the grace cut from the realtime calls' time, both finished
    // lines went realtime too and their batch answers were billed twice.)
    const inputs = [0, 1, 2].map((i) => `item ${i} <<fake tag=${tag} id=${i} steps=ok cancel_ms=1000${i === 2 ? " batch_ms=600000" : ""}>>`);
    const body = { inputs, prompt_template: "{{ item }}", model: "openai/gpt-6-luna", timeout_secs: 2, execution: { mode: "auto", deadline_secs: 8 } };
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 3 });
    const ended = await until(async () => {
      const now = (await call(base(), "GET", `/v1/jobs/${job.id}`, { token: key })).body;
      return now.batches[0]?.ended_at ? now : null;
    });
    expect(ended.usage.duplicated).toEqual({ input_tokens: 0, output_tokens: 0, cost_usd: 0 });
    expect((await fakeStats(tag)).batched).toBe(2); // the two finished lines are the items' results; only line 2 ran realtime
    expect((await allResults(base(), key, job.id)).map((r) => r.attempts)).toEqual([1, 1, 1]);
  });

  it("a batch the provider refuses is each line's failed attempt; one that fails its validation goes again; a dollar budget reserves each line at submission", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-refused");
    const body = (extra: string, more: Record<string, unknown> = {}) => ({
      inputs: [0, 1].map((i) => `item ${i} <<fake tag=${tag} id=${extra.length}-${i} steps=ok ${extra}>>`),
      prompt_template: "{{ item }}",
      model: "openai/gpt-6-luna",
      max_retries: 1,
      execution: { mode: "batch" },
      ...more,
    });
    // Refused at its creation (400: permanent): both items fail at once, none of their lines ran.
    const refused = await waitForJob(base(), key, (await call(base(), "POST", "/v1/map", { token: key, body: body("batch_refuse=1") })).body.job_id);
    expect(refused).toMatchObject({ status: "completed", failed: 2, total_attempts: 2, batches: [{ status: "failed", provider_batch_id: null }] });
    expect((await allResults(base(), key, refused.id))[0]).toMatchObject({
      error_kind: "llm_error",
      error: expect.stringMatching(/the batch could not be submitted: .*batch_refuse/),
    });
    // Failed its validation at the provider (transient): a second batch, then the items fail after max_retries.
    const failed = await waitForJob(base(), key, (await call(base(), "POST", "/v1/map", { token: key, body: body("batch_fail=1") })).body.job_id);
    expect(failed).toMatchObject({ status: "completed", failed: 2, total_attempts: 4 });
    // The first batch, then the two retries: in one batch, or two when their backoffs' jitter set them apart (a loaded machine's alarms).
    const statuses = failed.batches.map((b: { status: string }) => b.status);
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    expect(statuses.length).toBeLessThanOrEqual(3);
    expect(new Set(statuses)).toEqual(new Set(["failed"]));
    expect((await allResults(base(), key, failed.id))[1]).toMatchObject({
      error_kind: "llm_error",
      error: expect.stringMatching(/refused the batch: fake: the batch failed its validation/),
    });
    // A dollar budget: each line reserves its bound (at the batch price) when the batch is submitted, held while it runs.
    const gated = { ...body(""), inputs: [0, 1].map((i) => `item ${i} <<fake tag=${tag}-held id=${i} steps=ok gate=0>>`), token_budget: { usd: 1 } };
    const held = (await call(base(), "POST", "/v1/map", { token: key, body: gated })).body.job_id;
    const running = await until(async () => {
      const now = (await call(base(), "GET", `/v1/jobs/${held}`, { token: key })).body;
      return now.batches[0]?.provider_batch_id ? now : null;
    });
    expect(running.budget.reserved).toBeGreaterThan(2 * 1_024); // two lines' prompts and output bounds
    expect(running.budget.usd.reserved).toBeGreaterThan(0);
    await openGate(`${tag}-held`);
    const done = await waitForJob(base(), key, held);
    expect(done).toMatchObject({ status: "completed", succeeded: 2, budget: { reserved: 0, usd: { reserved: 0 } } });
    expect(done.budget.usd.spent).toBeCloseTo(done.cost_usd, 7);
  });

  it("refuses batch for a provider without a batch API, with nothing stored; auto runs it realtime", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("batch-none");
    const body = { inputs: [`x ${fake(tag, 0)}`], prompt_template: "{{ item }}", model: "openai-compatible/m" };
    const refused = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, execution: { mode: "batch" } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "unsupported_execution_mode", details: [{ path: "execution.mode" }] });
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
    const auto = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, execution: { mode: "auto" } } });
    const job = await waitForJob(base(), key, auto.body.job_id);
    expect(job).toMatchObject({ status: "completed", execution: { mode: "realtime" }, batches: [] });
    expect((await fakeStats(tag)).batched).toBe(0);
  });
});

/** Polls `ok` every 50 ms until it answers (at most 200 times). */
async function until<T>(ok: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await ok();
    if (value !== null) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the condition never held");
}

async function waitForBatch(key: string, jobId: string) {
  for (let i = 0; i < 200; i++) {
    const job = (await call(base(), "GET", `/v1/jobs/${jobId}`, { token: key })).body;
    const batch = job.batches?.[0];
    if (batch?.provider_batch_id) return batch as { provider_batch_id: string };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the job never submitted its batch");
}
