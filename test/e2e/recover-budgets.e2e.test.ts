/**
 * Recover for v1 jobs ("re-run the failed items"), token budgets and dry runs, over HTTP with the
 * fake model's per-tag counters proving that no finished call runs again.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, newTenant, openEvents, readSse, waitForJob, waitForStatus } from "./harness/api.ts";
import { base, fakeStats, scriptedMap, uniqueTag } from "./harness/context.ts";

describe("POST /v1/jobs/{id}/recover on a map job", () => {
  it("re-runs only the failed items, in the same job, and keeps one result per index (the newest)", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("recover");
    const created = await call(base(), "POST", "/v1/map", {
      token: key,
      body: scriptedMap(tag, ["ok", "400,slow:600", "ok", "bad", "ok"], { max_retries: 0 }),
    });
    const first = await waitForJob(base(), key, created.body.job_id);
    expect(first).toMatchObject({ status: "completed", succeeded: 3, failed: 2, total_attempts: 5 });
    expect((await fakeStats(tag)).requests).toBe(5);

    const busy = await call(base(), "POST", `/v1/jobs/${first.id}/recover`, { token: key, body: { error_kinds: ["timeout"] } });
    expect(busy.status).toBe(409); // no failed item of that kind
    const res = await call(base(), "POST", `/v1/jobs/${first.id}/recover`, { token: key, body: { error_kinds: ["llm_error"] } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job_id: first.id, status: "running", recovering: 1 });
    const again = await call(base(), "POST", `/v1/jobs/${first.id}/recover`, { token: key });
    expect(again).toMatchObject({ status: 409, body: { error: { code: "conflict" } } }); // item 1's new attempt takes 0.6 s
    const second = await waitForJob(base(), key, first.id);
    const results = await allResults(base(), key, first.id);
    expect(results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(results[1]).toMatchObject({ success: true, attempts: 1 });
    const stats = await fakeStats(tag);
    // Items 0, 2, 3, 4 were called once and never again (3 failed validation, not llm_error); item 1 twice.
    expect(stats.requests).toBe(6);
    expect(second).toMatchObject({ status: "completed", succeeded: 4, failed: 1, total_attempts: 6 });
    const batch = await call(base(), "GET", `/v1/jobs/${first.id}/batch`, { token: key });
    expect(batch.body.successes.length + batch.body.failures.length).toBe(5);

    const events = await readSse(await openEvents(base(), key, first.id));
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.event === "MAP_COMPLETED").length).toBeGreaterThanOrEqual(2);
    expect(events.find((e) => e.event === "JOB_RECOVERING")?.data).toEqual({ job_id: first.id, tasks: 1 });
  });

  it("answers 409 for a job that succeeded entirely, and 404 for another tenant's job", async () => {
    const { key } = await newTenant(base());
    const other = await newTenant(base());
    const created = await call(base(), "POST", "/v1/map?wait=true", { token: key, body: scriptedMap(uniqueTag("ok"), ["ok"]) });
    expect(created.status).toBe(200);
    const res = await call(base(), "POST", `/v1/jobs/${created.body.job_id}/recover`, { token: key });
    expect(res).toMatchObject({ status: 409, body: { error: { code: "conflict" } } });
    expect((await call(base(), "POST", `/v1/jobs/${created.body.job_id}/recover`, { token: other.key })).status).toBe(404);
    expect((await call(base(), "POST", `/v1/jobs/${created.body.job_id}/resume`, { token: key })).status).toBe(409);
    const bad = await call(base(), "POST", `/v1/jobs/${created.body.job_id}/recover`, { token: key, body: { max_retries: 99 } });
    expect(bad.status).toBe(400);
  });
});

describe("token budgets and dry runs", () => {
  it("estimates with ?dry_run=true and stores nothing", async () => {
    const { key } = await newTenant(base());
    const body = scriptedMap(uniqueTag("dry"), ["ok", "ok", "ok"], { max_tokens: 100 });
    const res = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body });
    expect(res.status).toBe(200);
    const e = res.body.estimate;
    // The expected output is sized from the schema ({echo: string, length: integer}: 23 tokens an answer); the bound is max_tokens.
    expect(e).toMatchObject({ calls: 3, output_tokens: 3 * 23, output_tokens_max: 300 });
    expect(e.input_tokens).toBeGreaterThan(3 * 5);
    expect(e.total_tokens).toBe(e.input_tokens + e.output_tokens_max); // what a budget must hold
    expect(e.cost_usd).toBeLessThan(e.cost_usd_max);
    expect(e.cost_usd_by_mode.realtime).toBe(e.cost_usd);
    expect(e.cost_usd_max_by_mode.realtime).toBe(e.cost_usd_max);
    expect(e.by_stage.items).toEqual({
      calls: 3,
      input_tokens: e.input_tokens,
      output_tokens: 69,
      output_tokens_max: 300,
      cached_input_tokens: 0,
      cache_write_input_tokens: 0,
      cost_usd: e.cost_usd,
      cost_usd_max: e.cost_usd_max,
    });
    expect(e.method).toMatch(/chars\/4.*expected outputs sized from each call's output schema/);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
    const invalid = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body: { ...body, prompt_template: "no item" } });
    expect(invalid.status).toBe(400); // every check a real submission runs

    const reduce = await call(base(), "POST", "/v1/reduce?dry_run=true", {
      token: key,
      body: {
        inputs: ["a", "b"],
        inner_task: { prompt_template: "{{ item }}", max_tokens: 50 },
        reduction_task: { prompt_template: "{{ accumulator }} {{ current_result }}", max_tokens: 70 },
        model: "openai/gpt-6-luna",
      },
    });
    expect(reduce.body.estimate).toMatchObject({ calls: 4, output_tokens_max: 240, by_stage: { inner: { calls: 2 }, reduction: { calls: 2 } } });
    // Reduction 1 holds the accumulator (≤ 70) and the inner result (≤ 50); reduction 0 the inner result.
    expect(reduce.body.estimate.by_stage.reduction.input_tokens).toBeGreaterThanOrEqual(70 + 2 * 50);
    expect(reduce.body.estimate.method).toMatch(/max_tokens bound/);
  });

  it("refuses a job whose estimate is over its budget: 422 token_budget_exceeded with the estimate and suggestions", async () => {
    const { key } = await newTenant(base());
    const body = scriptedMap(uniqueTag("over"), ["ok", "ok"], { token_budget: { total: 100 } });
    const res = await call(base(), "POST", "/v1/map", { token: key, body });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("token_budget_exceeded");
    expect(res.body.error.details.budget).toBe(100);
    expect(res.body.error.details.estimate.output_tokens_max).toBe(2 * 1024); // unset max_tokens counts 1,024
    expect(res.body.error.details.suggestions.length).toBeGreaterThan(0);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });

  it("pauses when the budget cannot fit the next call, and resumes with a larger one without repeating a call", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("budget");
    // Each item needs 3 attempts, the estimate counts 1: the real spend outruns the budget.
    const body = scriptedMap(
      tag,
      Array.from({ length: 6 }, () => "bad,bad,ok"),
      { max_tokens: 20, concurrency: 1, max_retries: 2 },
    );
    const dry = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body });
    const total = dry.body.estimate.total_tokens;
    const created = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, token_budget: { total } } });
    expect(created.status).toBe(202);
    const paused = await waitForStatus(base(), key, created.body.job_id, ["paused"], 30_000);
    expect(paused).toMatchObject({ status: "paused", pause_reason: "budget_exhausted" });
    expect(paused.budget.total).toBe(total);
    expect(paused.budget.spent).toBeLessThanOrEqual(total);
    expect(paused.completed).toBeLessThan(6);
    await new Promise((r) => setTimeout(r, 500));
    const callsWhilePaused = (await fakeStats(tag)).requests;
    await new Promise((r) => setTimeout(r, 500));
    expect((await fakeStats(tag)).requests).toBe(callsWhilePaused); // nothing starts while paused

    // A total not above the spend would pause again at once: 409 with the numbers, and the job stays paused.
    const below = await call(base(), "POST", `/v1/jobs/${paused.id}/resume`, { token: key, body: { token_budget: { total: paused.budget.spent } } });
    expect(below.status).toBe(409);
    expect(below.body.error).toMatchObject({
      code: "conflict",
      details: [{ path: "token_budget.total", message: expect.stringContaining(`what the job has spent (${paused.budget.spent} tokens)`) }],
    });
    expect((await call(base(), "GET", `/v1/jobs/${paused.id}`, { token: key })).body).toMatchObject({ status: "paused" });

    const resumed = await call(base(), "POST", `/v1/jobs/${paused.id}/resume`, { token: key, body: { token_budget: { total: total * 10 } } });
    expect(resumed.status).toBe(202);
    expect(resumed.body).toMatchObject({ status: "running", pause_reason: null });
    const done = await waitForJob(base(), key, paused.id);
    expect(done).toMatchObject({ status: "completed", succeeded: 6, total_attempts: 18, pause_reason: null });
    expect((await fakeStats(tag)).requests).toBe(18); // 3 per item, none twice
    expect(done.budget).toMatchObject({ total: total * 10, reserved: 0 });
    expect(done.budget.spent).toBe(done.usage.input_tokens + done.usage.output_tokens);
    const names = (await readSse(await openEvents(base(), key, paused.id))).map((e) => e.event);
    expect(names.indexOf("JOB_PAUSED")).toBeGreaterThan(0);
    expect(names.indexOf("JOB_RESUMED")).toBeGreaterThan(names.indexOf("JOB_PAUSED"));
  });

  it("fails with budget_exhausted under on_exhausted: fail, and recover goes on", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("budgetfail");
    const body = scriptedMap(
      tag,
      Array.from({ length: 4 }, () => "bad,ok"),
      { max_tokens: 20, concurrency: 1, max_retries: 1 },
    );
    const total = (await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body })).body.estimate.total_tokens;
    const created = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, token_budget: { total, on_exhausted: "fail" } } });
    const failed = await waitForJob(base(), key, created.body.job_id);
    expect(failed).toMatchObject({ status: "failed", error: { code: "budget_exhausted" } });
    const res = await call(base(), "POST", `/v1/jobs/${failed.id}/recover`, { token: key, body: { token_budget: { total: total * 10 } } });
    expect(res.status).toBe(202);
    const done = await waitForJob(base(), key, failed.id);
    expect(done).toMatchObject({ status: "completed", succeeded: 4, error: null });
    expect((await fakeStats(tag)).requests).toBe(8);
  });
});
