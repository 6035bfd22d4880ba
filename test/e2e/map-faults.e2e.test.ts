import { describe, expect, it } from "vitest";
import { allResults, call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, scriptedMap, uniqueTag } from "./harness/context.ts";
import { ownKeyTenant } from "./harness/limited-key.ts";

async function runOne(steps: string, overrides: Record<string, unknown> = {}) {
  // A throttle cuts the adaptive limit of the key it came on: scripted on a key of the tenant's own, not the deployment's.
  const { key } = await (/\b(429|529)\b/.test(steps) ? ownKeyTenant() : newTenant(base()));
  const tag = uniqueTag("fault");
  const created = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(tag, [steps], overrides) });
  expect(created.status).toBe(202);
  const job = await waitForJob(base(), key, created.body.job_id);
  const [result] = await allResults(base(), key, created.body.job_id);
  return { job, result, stats: await fakeStats(tag) };
}

describe("retries and failures, through the real SDKs", () => {
  it("accepts fenced JSON on the first attempt", async () => {
    const { result } = await runOne("fence");
    expect(result).toMatchObject({ success: true, attempts: 1, output: { echo: "Summarize item 0" } });
  });

  it("accepts prose around one JSON object", async () => {
    const { result } = await runOne("prose-json");
    expect(result).toMatchObject({ success: true, attempts: 1 });
  });

  it("retries prose with guidance that names the problem, and succeeds on attempt 2", async () => {
    const { result, stats } = await runOne("prose,ok", { retry_guidance: "Return only JSON please." });
    expect(result).toMatchObject({ success: true, attempts: 2 });
    expect(stats.requests).toBe(2);
    expect(stats.prompts[0]).not.toContain("Return only JSON please.");
    expect(stats.prompts[1]).toContain("Return only JSON please.");
    expect(stats.prompts[1]).toContain("the response is not valid JSON");
    expect(result.usage.input_tokens).toBeGreaterThan(0);
  });

  it("fails as validation after 1 + max_retries schema violations, naming the schema errors", async () => {
    const { result, stats, job } = await runOne("bad", { max_retries: 2 });
    expect(result).toMatchObject({ success: false, error_kind: "validation", attempts: 3, output: null });
    expect(result.error).toMatch(/echo/);
    expect(stats.requests).toBe(3);
    expect(stats.prompts[1]).toMatch(/Problems with your previous response:\n- the output: .*echo/);
    expect(job).toMatchObject({ completed: 1, failed: 1, succeeded: 0, total_attempts: 3 });
  });

  it("backs off after a 429, honouring a longer Retry-After, then succeeds", async () => {
    const { result, stats } = await runOne("429:2,ok");
    expect(result).toMatchObject({ success: true, attempts: 2 });
    expect(stats.times[1] - stats.times[0]).toBeGreaterThanOrEqual(2_000);
  });

  it("runs a retry once its Retry-After has passed", async () => {
    // Due 1.0–1.5 s after the 429 (Retry-After 1 plus jitter), by the coordinator's alarm, not by
    // the Queue's backup message (2 s, batched): the alarm's time is the integration level's test
    // (coordinator.integration.test.ts) — on this suite's one shared server, beside a second suite,
    // the alarm's run and the dispatch took 1.4 s more (2.87 s once).
    const { result, stats } = await runOne("429:1,ok");
    expect(result).toMatchObject({ success: true, attempts: 2 });
    const gap = (stats.times[1] as number) - (stats.times[0] as number);
    expect(gap).toBeGreaterThanOrEqual(1_000);
  });

  it("backs off 0.5 s after a 500 with no Retry-After", async () => {
    const { result, stats } = await runOne("500,ok");
    expect(result).toMatchObject({ success: true, attempts: 2 });
    expect(stats.times[1] - stats.times[0]).toBeGreaterThanOrEqual(500);
  });

  it("retries Anthropic's 529 overloaded as transient", async () => {
    const { result } = await runOne("529,ok", { model: "anthropic/claude-sonnet-4-6" });
    expect(result).toMatchObject({ success: true, attempts: 2 });
  });

  it("fails as llm_error when transient errors outlast max_retries", async () => {
    const { result, stats } = await runOne("500", { max_retries: 1 });
    expect(result).toMatchObject({ success: false, error_kind: "llm_error", attempts: 2 });
    expect(stats.requests).toBe(2);
  });

  it("retries a timeout at once, without backoff", async () => {
    // A timeout of 2 s: the second call (answered at once) must fit in it on a busy machine too
    // (0.5 s did not, beside a second suite: it timed out as well).
    const { result, stats } = await runOne("slow:30000,ok", { timeout_secs: 2 });
    expect(result).toMatchObject({ success: true, attempts: 2 });
    const gap = stats.times[1] - stats.times[0];
    // The timeout itself, give or take the two requests' way to the fake server and the runtime's
    // coarse clock: well above a retry without the timeout.
    expect(gap).toBeGreaterThanOrEqual(1_950);
    // The call was cut at its timeout: the retry came long before the slow answer would have (30 s).
    // That no backoff is added is nextStep's (retry.unit.test.ts) and the alarm's (the coordinator's
    // integration tests): on the suite's one shared server, busy with other files' jobs, the report
    // and the retry's dispatch took 1.4 s more beside a second suite, and once 4.5 s more with the
    // suite alone (a 6 s answer then looked as if the retry had waited for it).
    expect(gap).toBeLessThan(15_000);
  });

  it("fails as timeout when every attempt times out", async () => {
    const { result } = await runOne("slow:2000", { timeout_secs: 0.3, max_retries: 1 });
    expect(result).toMatchObject({ success: false, error_kind: "timeout", attempts: 2 });
  });

  it("fails a permanent 401 at once as llm_error, without retrying", async () => {
    const { result, stats } = await runOne("401", { max_retries: 5 });
    expect(result).toMatchObject({ success: false, error_kind: "llm_error", attempts: 1 });
    expect(result.error).toContain("401");
    expect(result.error).not.toMatch(/sk-env-openai-key/);
    expect(stats.requests).toBe(1);
  });

  it("never has more calls in flight than the concurrency", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("inflight");
    const body = scriptedMap(tag, Array(24).fill("ok"), { concurrency: 4 }, 150);
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job.succeeded).toBe(24);
    const stats = await fakeStats(tag);
    expect(stats.max_in_flight).toBeLessThanOrEqual(4);
    expect(stats.max_in_flight).toBeGreaterThanOrEqual(3); // and the slots are actually used
  });

  it("holds no slot for a waiting retry", async () => {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag("noslot");
    // concurrency 1: item 0 waits 2 s for its retry; items 1-3 must run meanwhile
    const body = scriptedMap(tag, ["429:2,ok", "ok", "ok", "ok"], { concurrency: 1 });
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    await waitForJob(base(), key, created.body.job_id);
    const byCompletion = await allResults(base(), key, created.body.job_id, "&order=completion");
    expect(byCompletion.map((r) => r.index)).toEqual([1, 2, 3, 0]);
  });
});
