/**
 * A rate-limit answer is back-pressure, never a lost item (contract v3, "Pacing by the provider's
 * limits"): against a key the fake model server holds to real per-minute windows, a job's 429s do
 * not use up `max_retries`; an item fails `rate_limited` only after the job's `max_wait_secs`.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, openEvents, readSse, waitForJob, waitForStatus } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { limitedTenant, ownKeyTenant } from "./harness/limited-key.ts";

const job = (tag: string, n: number, extra: Record<string, unknown>) => ({
  inputs: Array.from({ length: n }, (_, i) => ({ d: fake(tag, i) })),
  prompt_template: "Summarize {{ item.d }}",
  model: "openai/gpt-6-luna",
  ...extra,
});

describe("rate limits are back-pressure", () => {
  it("a key that allows 10 calls a second: a 30-item job at concurrency 16 with max_retries 0 loses nothing to its 429s", async () => {
    // No header says so (with headers, the calls would be paced to the limit and meet no 429: test/e2e/pacing.e2e.test.ts).
    const { key } = await limitedTenant({ rpm: 600, tpm: null, headers: "none", burst_secs: 1 });
    const tag = uniqueTag("rl-30");
    const created = await call(base(), "POST", "/v1/map", { token: key, body: job(tag, 30, { concurrency: 16, max_retries: 0 }) });
    expect(created.status).toBe(202);
    const done = await waitForJob(base(), key, created.body.job_id);
    const stats = await fakeStats(tag);
    expect(stats.rate_limited).toBeGreaterThan(0); // the key did push back
    expect(done).toMatchObject({ status: "completed", succeeded: 30, failed: 0 });
    expect(done.total_attempts).toBe(stats.requests); // every call sent counts as an attempt, the throttled ones too
    const results = await allResults(base(), key, created.body.job_id);
    expect(results.filter((r) => r.success)).toHaveLength(30);
    expect(Math.max(...results.map((r) => r.attempts))).toBeGreaterThan(1);
  });

  it("an item that waited longer than max_wait_secs fails rate_limited; the others are unaffected", async () => {
    // One call, then a minute's wait, and no header says so: the second item meets a 429 (with headers the
    // pacer would hold it back until the minute is over, and it would succeed: waiting for room is not a failure).
    const { key } = await limitedTenant({ rpm: 1, tpm: null, headers: "none", burst_secs: 60 });
    const tag = uniqueTag("rl-wait");
    const created = await call(base(), "POST", "/v1/map", { token: key, body: job(tag, 2, { concurrency: 1, max_retries: 5, max_wait_secs: 1 }) });
    const done = await waitForJob(base(), key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", succeeded: 1, failed: 1 });
    const failed = (await allResults(base(), key, created.body.job_id)).find((r) => !r.success);
    expect(failed).toMatchObject({ error_kind: "rate_limited", error: expect.stringMatching(/^Rate limited for \d+ s \(the job's max_wait_secs is 1\)/) });
  });

  it("a spent quota (OpenAI's insufficient_quota, with a ten-day retry-after) pauses the job (provider_quota) instead of waiting or failing; resume goes on", async () => {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag("rl-quota");
    // Item 1's first call meets the spent quota; once paid (resumed), it answers.
    const inputs = [0, 1, 2].map((i) => ({ d: fake(tag, i, i === 1 ? "quota:864000,ok" : "ok") }));
    const created = await call(base(), "POST", "/v1/map", { token: key, body: { ...job(tag, 3, { max_retries: 3, concurrency: 3 }), inputs } });
    const paused = await waitForStatus(base(), key, created.body.job_id, ["paused"]);
    expect(paused).toMatchObject({ status: "paused", pause_reason: "provider_quota" });
    const events = await readSse(await openEvents(base(), key, created.body.job_id), { stopWhen: (e) => e.event === "JOB_PAUSED" });
    expect(events.at(-1)).toMatchObject({ event: "JOB_PAUSED", data: { reason: "provider_quota" } });
    expect((await call(base(), "POST", `/v1/jobs/${created.body.job_id}/resume`, { token: key, body: {} })).status).toBe(202);
    const done = await waitForJob(base(), key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", succeeded: 3, failed: 0, pause_reason: null });
    const item = (await allResults(base(), key, created.body.job_id)).find((r) => r.index === 1);
    expect(item).toMatchObject({ success: true, attempts: 1 }); // the refused call was not billed: no attempt
    expect((await fakeStats(tag)).requests).toBe(4);
  });

  it("a ten-day retry-after on a paced key ends the job at its max_wait_secs: waiting on the rate pacer counts", async () => {
    // The key sends rate-limit headers, so its pacer paces, and the 429's retry-after blocks the pacer (for at most its bound).
    const { key } = await limitedTenant({ rpm: 6_000, tpm: null, headers: "openai", burst_secs: 1 });
    const tag = uniqueTag("rl-days");
    const created = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { ...job(tag, 1, { max_retries: 0, max_wait_secs: 2 }), inputs: [{ d: fake(tag, 0, "429:864000") }] },
    });
    const done = await waitForJob(base(), key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", failed: 1 });
    const [result] = await allResults(base(), key, created.body.job_id);
    expect(result).toMatchObject({ success: false, error_kind: "rate_limited" });
  });

  /** One agent item whose calls the fake answers `steps`, on a tenant and provider key of its own: the ended job, its result and the fake's counters. */
  async function agentItem(name: string, steps: string, extra: Record<string, unknown>) {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag(name);
    const created = await call(base(), "POST", "/v1/agentic-map", {
      token: key,
      body: { inputs: [{ d: fake(tag, 0, steps) }], agent_prompt_template: "Go {{ item.d }}", model: "openai/gpt-6-luna", ...extra },
    });
    const done = await waitForJob(base(), key, created.body.job_id);
    const [result] = await allResults(base(), key, created.body.job_id);
    return { done, result, stats: await fakeStats(tag) };
  }

  it("an agent's calls wait out rate limits too: two 429s with max_retries 0, then its answer", async () => {
    const { done, result, stats } = await agentItem("rl-agent", "429:1,429:1,text:done_waiting", { max_retries: 0 });
    expect(done).toMatchObject({ status: "completed", succeeded: 1 });
    expect(result).toMatchObject({ success: true, output_text: "done waiting", turns: 1 });
    expect(stats.requests).toBe(3);
  });

  it("an agent whose call waited longer than max_wait_secs fails rate_limited", async () => {
    const { result } = await agentItem("rl-agent-wait", "429:1", { max_wait_secs: 1 });
    expect(result).toMatchObject({
      success: false,
      error_kind: "rate_limited",
      error: expect.stringMatching(/^Rate limited for \d+ s \(the job's max_wait_secs is 1\)/),
    });
  });

  it("refuses a max_wait_secs out of bounds", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/map", { token: key, body: job("x", 1, { max_wait_secs: 0 }) });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe("max_wait_secs");
  });
});

describe("the calls in flight after a rough job (#33's slot report)", () => {
  /** A first job of `steps` at concurrency 4 (timeouts at 1 s), then 30 items at concurrency 4: the second job's calls in flight and its CONCURRENCY_CHANGED events. */
  async function afterRoughJob(steps: string[]) {
    const { key } = await ownKeyTenant(); // a 429 cuts its key's limit: a key of its own
    const rough = uniqueTag("rough");
    const first = await call(base(), "POST", "/v1/map", {
      token: key,
      body: {
        inputs: steps.map((s, i) => ({ d: fake(rough, i, s) })),
        prompt_template: "{{ item.d }}",
        model: "openai/gpt-6-luna",
        concurrency: 4,
        max_retries: 0,
        timeout_secs: 1,
      },
    });
    await waitForJob(base(), key, first.body.job_id);
    const next = uniqueTag("after-rough");
    const second = await call(base(), "POST", "/v1/map", {
      token: key,
      body: {
        inputs: Array.from({ length: 30 }, (_, i) => ({ d: fake(next, i, "ok", 300) })),
        prompt_template: "{{ item.d }}",
        model: "openai/gpt-6-luna",
        concurrency: 4,
      },
    });
    const done = await waitForJob(base(), key, second.body.job_id);
    const changes = (await readSse(await openEvents(base(), key, second.body.job_id))).filter((e) => e.event === "CONCURRENCY_CHANGED").map((e) => e.data);
    return { done, changes, stats: await fakeStats(next) };
  }

  it("timeouts and a 401 leave the next job all its slots: 4 calls in flight from its start (no worker is held by a timed-out call)", async () => {
    const { done, changes, stats } = await afterRoughJob(["slow:8000", "slow:8000", "401", "401"]);
    expect(done).toMatchObject({ succeeded: 30, effective_concurrency: 4 });
    expect(changes).toEqual([]);
    expect(stats.max_in_flight).toBe(4);
  });

  it("after a 429, the next job runs at the limit it reports: it starts at the learned one (CONCURRENCY_CHANGED), has that many in flight, never more", async () => {
    const { done, changes, stats } = await afterRoughJob(["429:1,ok", "slow:8000", "slow:8000", "401"]);
    expect(done).toMatchObject({ succeeded: 30 });
    // 0.8 of the calls in flight when the 429's report came: 3 of 4, or 2 of 3 when the 401's report came first.
    expect(changes[0]?.reason).toBe("shared");
    const learned = changes[0]?.effective_concurrency as number;
    expect([2, 3]).toContain(learned);
    expect(stats.max_in_flight).toBeGreaterThanOrEqual(learned); // the reported limit is used…
    expect(stats.max_in_flight).toBeLessThanOrEqual(4); // …and not passed; it grows back by probing (aimd.ts) and ends lifted
    expect(changes.at(-1)).toMatchObject({ reason: "recovered", effective_concurrency: 4 });
  });
});
