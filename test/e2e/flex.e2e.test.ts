/**
 * OpenAI's flex tier (contract v4, "Providers as they fail"), over HTTP against the fake model,
 * which serves `service_tier: "flex"` as OpenAI does (the tier in the answer; `busy` is its `429
 * resource_unavailable`; `MODEL@flex~STEP` scripts a model's flex calls apart from its standard ones):
 * execution mode flex asks for the tier, prices the answers at the batch rates, takes busy answers
 * as unbilled back-pressure, and is refused where a model has no flex tier; mode auto climbs the
 * ladder batch → flex → standard as its deadline needs.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, openEvents, readSse, waitForJob } from "./harness/api.ts";
import { base, fakeBatches, fakeStats, uniqueTag } from "./harness/context.ts";

const LUNA = { input: 0.1, output: 0.5 }; // openai/gpt-6-luna, USD per million tokens
const price = (r: { usage: { input_tokens: number; output_tokens: number } }) =>
  (r.usage.input_tokens * LUNA.input + r.usage.output_tokens * LUNA.output) / 1e6;

const flexJob = (tag: string, steps: (i: number) => string, n: number, extra: Record<string, unknown> = {}) => ({
  inputs: Array.from({ length: n }, (_, i) => ({ d: fake(tag, i, steps(i)) })),
  prompt_template: "Summarize {{ item.d }}",
  model: "openai/gpt-6-luna",
  max_retries: 1,
  execution: { mode: "flex" },
  ...extra,
});

describe("the flex tier", () => {
  it("mode flex: each call asks for the tier; the answers say flex and are priced at the batch rates; busy answers wait as back-pressure, neither billed nor counted against max_retries", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("flex-mode");
    // Item 1 is busy three times (max_retries 1 would have failed it were they errors), then answers.
    const created = await call(base(), "POST", "/v1/map", { token: key, body: flexJob(tag, (i) => (i === 1 ? "busy,busy,busy,ok" : "ok"), 3) });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 3, failed: 0, execution: { mode: "flex" } });
    const results = (await allResults(base(), key, job.id)).sort((a, b) => a.index - b.index);
    expect(results.map((r) => [r.service_tier, r.attempts])).toEqual([
      ["flex", 1],
      ["flex", 4],
      ["flex", 1],
    ]);
    for (const r of results) expect(r.cost_usd).toBeCloseTo(price(r) * 0.5, 9);
    expect(job.cost_usd).toBeCloseTo(
      results.reduce((n, r) => n + r.cost_usd, 0),
      9,
    ); // the busy answers cost nothing
    expect((await fakeStats(tag)).requests).toBe(6);
    // The flex tier's busy is its capacity, not the key's rate limits: the key's adaptive limit is not cut
    // (it is shared by every job on the key: a cut would slow the others too).
    const events = await readSse(await openEvents(base(), key, job.id));
    expect(events.filter((e) => e.event === "CONCURRENCY_CHANGED")).toEqual([]);
  });

  it("a standard call records the tier the provider says served it, at the full price", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("flex-default");
    const job = await waitForJob(
      base(),
      key,
      (await call(base(), "POST", "/v1/map", { token: key, body: flexJob(tag, () => "ok", 1, { execution: undefined }) })).body.job_id,
    );
    const [result] = await allResults(base(), key, job.id);
    expect(result).toMatchObject({ success: true, service_tier: "default" });
    expect(result.cost_usd).toBeCloseTo(price(result), 9);
  });

  it("refuses flex where a model of the job has no flex tier (the job's or a fallback's), with nothing stored; the dry run of a flex job is priced at the batch rates", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("flex-refused");
    const before = (await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs.length;
    for (const body of [
      flexJob(tag, () => "ok", 1, { model: "anthropic/claude-haiku-4-5" }),
      flexJob(tag, () => "ok", 1, { fallbacks: ["anthropic/claude-haiku-4-5"] }),
    ]) {
      const refused = await call(base(), "POST", "/v1/map", { token: key, body });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "unsupported_execution_mode", details: [{ path: "execution.mode" }] });
      expect(refused.body.error.message).toMatch(/anthropic\/claude-haiku-4-5 has no flex tier/);
    }
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs.length).toBe(before);
    // A dollar budget between the flex (batch-rate) bound and the standard one: flex fits, standard is 422.
    const dry = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body: flexJob(tag, () => "ok", 2) });
    const { cost_usd_max_by_mode: bounds } = dry.body.estimate ?? dry.body;
    const usd = (bounds.batch + bounds.realtime) / 2;
    expect((await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body: flexJob(tag, () => "ok", 2, { token_budget: { usd } }) })).status).toBe(200);
    const standard = await call(base(), "POST", "/v1/map?dry_run=true", {
      token: key,
      body: flexJob(tag, () => "ok", 2, { token_budget: { usd }, execution: undefined }),
    });
    expect(standard.status).toBe(422);
  });

  it("auto climbs the ladder: batch first, flex as the deadline comes near, the standard tier when only it can make it", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("flex-ladder");
    // No batch line ever finishes. Item 0 answers on flex; items 1 and 2 find flex busy until they go to the standard tier.
    const inputs = [0, 1, 2].map(
      (i) => `item ${i} <<fake tag=${tag} id=${i} batch_ms=600000 steps=gpt-6-luna@flex~${i === 0 ? "ok" : "busy"},gpt-6-luna@default~ok>>`,
    );
    // Three items at concurrency 16, calls of at most 1 s: flex needs 3 s (three standard calls) and the cancel's grace 2 s
    // (a quarter of the deadline), so the move to flex comes at 3 s of an 8 s deadline; standard needs 1 s: it comes at 7 s.
    const body = { inputs, prompt_template: "{{ item }}", model: "openai/gpt-6-luna", timeout_secs: 1, execution: { mode: "auto", deadline_secs: 8 } };
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 3 });
    const provider = (await fakeBatches()).find((b) => b.id === job.batches[0].provider_batch_id);
    expect(provider, JSON.stringify(provider)).toMatchObject({ requests: 3, cancelled: true }); // batch first
    const results = (await allResults(base(), key, job.id)).sort((a, b) => a.index - b.index);
    expect(results.map((r) => r.service_tier)).toEqual(["flex", "default", "default"]);
    expect(results[0].cost_usd).toBeCloseTo(price(results[0]) * 0.5, 9);
    expect(results[1].cost_usd).toBeCloseTo(price(results[1]), 9);
    // Items 1 and 2 waited on flex (at least one busy answer each) until the standard rung, which came after the move to flex.
    expect((await fakeStats(tag)).requests).toBeGreaterThanOrEqual(5);
  });
});
