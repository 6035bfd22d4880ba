/**
 * Pacing by the provider's limits (contract v3): a key whose answers carry rate-limit headers is
 * paced to them — calls spread evenly at the limit, not sent to meet 429s — in both header
 * formats, by requests and by tokens; a tenant's declared limits pace a key that sends no headers.
 * The job shows its pacing (`pacing`, PACING_CHANGED).
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, openEvents, readSse, waitForJob } from "./harness/api.ts";
import { base, fakeStats, fakeUrl, uniqueTag } from "./harness/context.ts";
import type { LimitConfig } from "../fake-model/limits.ts";
import { example } from "./harness/readme.ts";
import { limitedTenant } from "./harness/limited-key.ts";

const job = (tag: string, n: number, extra: Record<string, unknown>) => ({
  inputs: Array.from({ length: n }, (_, i) => ({ d: fake(tag, i) })),
  prompt_template: "Summarize {{ item.d }}",
  model: "openai/gpt-6-luna",
  concurrency: 16,
  max_retries: 0,
  ...extra,
});

/**
 * Paced: at most 10 % of the calls met a 429 — unpaced, most of the calls after the first
 * second's 20 would. On a quiet machine none does (BENCHMARKS.md, S12); beside a second test
 * suite the leased calls of a busy runtime can reach the provider bunched (5 of 85 once), and its
 * per-second window is the strictest a provider enforces. Each 429 is back-pressure: the item
 * waits and goes again, never lost (every test here also asserts all items succeeded).
 */
const paced = (stats: { rate_limited: number; requests: number }) => expect(stats.rate_limited).toBeLessThanOrEqual(Math.floor(0.1 * stats.requests));

/** Runs the job; its end, the fake's counters for it, its events and how long it took. */
async function run(key: string, tag: string, body: Record<string, unknown>) {
  const started = Date.now();
  const created = await call(base(), "POST", "/v1/map", { token: key, body });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  const done = await waitForJob(base(), key, created.body.job_id);
  const ms = Date.now() - started;
  const events = await readSse(await openEvents(base(), key, created.body.job_id));
  return { done, ms, stats: await fakeStats(tag), events, results: await allResults(base(), key, created.body.job_id) };
}

describe("pacing by the provider's rate limits", () => {
  it("OpenAI headers, 1,200 requests a minute enforced per second: 80 items at concurrency 16 are paced and take the limit's time", async () => {
    const { key } = await limitedTenant({ rpm: 1_200, tpm: null, headers: "openai", burst_secs: 1 });
    const tag = uniqueTag("pace-oa");
    const { done, ms, stats, events } = await run(key, tag, job(tag, 80, {}));
    expect(done).toMatchObject({ status: "completed", succeeded: 80, failed: 0 });
    paced(stats);
    expect(ms).toBeGreaterThanOrEqual(((80 - 20) / 20) * 1_000 * 0.9); // 20 at once, then 20 a second
    expect(done.pacing).toEqual({ rpm: 1_200, tpm: null, source: "headers", share: 1 });
    expect(events.find((e) => e.event === "PACING_CHANGED")?.data.pacing).toMatchObject({ rpm: 1_200, source: "headers" });
  });

  it("Anthropic headers: requests and input tokens per minute, each kept apart: 60 items paced", async () => {
    const { key } = await limitedTenant({ rpm: 1_200, itpm: 1_000_000, otpm: 1_000_000, headers: "anthropic", burst_secs: 1 }, "anthropic");
    const tag = uniqueTag("pace-an");
    const { done, stats } = await run(key, tag, job(tag, 60, { model: "anthropic/claude-haiku-4-5" }));
    expect(done).toMatchObject({ status: "completed", succeeded: 60, failed: 0 });
    paced(stats);
    expect(done.pacing).toEqual({ rpm: 1_200, tpm: 1_000_000, source: "headers", share: 1 });
  });

  it("OpenAI tokens, counted as prompt + max_tokens, when they bind before requests", async () => {
    // ~110 tokens a call (a prompt of ~10 and max_tokens 100) against 30,000 a minute: ~4.5 calls a second of the 100 the requests allow.
    // A key nothing is known of: one call goes first, and its headers pace the others (16 at once would meet 12 429s).
    const { key } = await limitedTenant({ rpm: 6_000, tpm: 30_000, headers: "openai", burst_secs: 1 });
    const tag = uniqueTag("pace-tok");
    const { done, stats, ms } = await run(key, tag, job(tag, 24, { max_tokens: 100 }));
    expect(done).toMatchObject({ status: "completed", succeeded: 24, failed: 0 });
    paced(stats);
    expect(done.pacing).toMatchObject({ rpm: 6_000, tpm: 30_000, source: "headers" });
    expect(ms).toBeGreaterThan(3_000); // token-bound: about 4.5 calls a second after the first few
  });

  it("a tenant's declared limits pace a key that sends no headers, from the first call", async () => {
    // The README's declaration, with the fake's limit for gpt-6-luna.
    const declared = example("provider-rate-limits").rate_limits as Record<string, { rpm: number; tpm: number }>;
    const rate_limits = { ...declared, "gpt-6-luna": { rpm: 1_200 } };
    const { key } = await limitedTenant({ rpm: 1_200, tpm: null, headers: "none", burst_secs: 1 }, "openai", { rate_limits });
    const listed = await call(base(), "GET", "/v1/providers", { token: key });
    expect(listed.body.providers[0].rate_limits).toEqual({
      "gpt-6-luna": { rpm: 1_200, tpm: null },
      "*": { rpm: declared["*"]?.rpm, tpm: declared["*"]?.tpm },
    });
    const tag = uniqueTag("pace-decl");
    const { done, stats } = await run(key, tag, job(tag, 60, {}));
    expect(done).toMatchObject({ status: "completed", succeeded: 60, failed: 0 });
    paced(stats);
    expect(done.pacing).toEqual({ rpm: 1_200, tpm: null, source: "declared", share: 1 });
  });

  it("a job's own rate_limit lowers the pace of its calls", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("pace-job");
    const { done, ms, stats } = await run(key, tag, job(tag, 12, { rate_limit: { rpm: 300 } })); // 5 a second, after the first 5
    expect(done).toMatchObject({ status: "completed", succeeded: 12 });
    expect(done.pacing).toEqual({ rpm: 300, tpm: null, source: "job", share: null });
    // Half a second's worth at once (2), then 5 a second: the last of the 12 about 2 s after the
    // first. (A bound on how many came in the first half second is not kept: beside a second suite
    // a busy runtime's calls, dispatched over a second, reached the provider bunched — 7 in 500 ms;
    // a stall only spreads them further, so the spread is what is asserted.)
    expect(ms).toBeGreaterThanOrEqual(1_500);
    const times = stats.times.map((t) => t - (stats.times[0] as number));
    expect(Math.max(...times)).toBeGreaterThanOrEqual(1_400);
  });

  it("tenants sharing a key share its limit: half each while both wait, then per job of a tenant", async () => {
    // Two seconds of burst: this test measures the shares; the per-second window is the first test's
    // (three jobs' leased calls reach the provider more bunched than one's on a busy machine: 16 of
    // 180 met a 429 in a second window beside two more suites).
    const limits: LimitConfig = { rpm: 1_200, tpm: null, headers: "openai", burst_secs: 2 };
    const apiKey = `sk-${uniqueTag("shared")}`;
    await fetch(`${fakeUrl()}/_fake/limits`, { method: "POST", body: JSON.stringify({ key: apiKey, limits }) });
    const tenants = await Promise.all([newTenant(base()), newTenant(base())]);
    for (const t of tenants) await call(base(), "PUT", "/v1/providers/openai", { token: t.key, body: { api_key: apiKey, base_url: `${fakeUrl()}/v1` } });
    // Tenant a runs two jobs, tenant b one: b gets half of the key, a's jobs a quarter each.
    const tags = [uniqueTag("fair-a1"), uniqueTag("fair-a2"), uniqueTag("fair-b")];
    const owners = [tenants[0], tenants[0], tenants[1]];
    const jobs = await Promise.all(tags.map((tag, i) => call(base(), "POST", "/v1/map", { token: owners[i]!.key, body: job(tag, 60, {}) })));
    const done = await Promise.all(jobs.map((j, i) => waitForJob(base(), owners[i]!.key, j.body.job_id)));
    for (const d of done) expect(d).toMatchObject({ status: "completed", succeeded: 60 });
    const stats = await Promise.all(tags.map((tag) => fakeStats(tag)));
    paced({ rate_limited: stats.reduce((n, s) => n + s.rate_limited, 0), requests: stats.reduce((n, s) => n + s.requests, 0) });
    // While all three ran (until the first ended), the calls each got.
    const firstEnd = Math.min(...stats.map((s) => Math.max(...s.times)));
    const start = Math.min(...stats.map((s) => Math.min(...s.times)));
    const during = stats.map((s) => s.times.filter((t) => t >= start + 1_000 && t <= firstEnd - 250).length); // past the first second's bucket
    const all = during.reduce((a, b) => a + b, 0);
    expect(all).toBeGreaterThan(20);
    // About half for b. Pacing is work-conserving: a share its job does not ask for in time is lent to
    // the others at once, so on a loaded machine (b's coordinator late to ask again) b gets a little
    // less — 0.400 once beside a second suite. The shares the pacer gave are the exact check, below.
    expect((during[2] as number) / all).toBeGreaterThan(0.35);
    expect((during[2] as number) / all).toBeLessThan(0.65);
    // Each job was told its share as it changed: a quarter for a's jobs, half for b's, while all three waited.
    const shares = await Promise.all(
      jobs.map(async (j, i) => {
        const events = await readSse(await openEvents(base(), owners[i]!.key, j.body.job_id));
        return events.filter((e) => e.event === "PACING_CHANGED").map((e) => e.data.pacing.share as number);
      }),
    );
    expect(shares[0]).toContain(0.25);
    expect(shares[1]).toContain(0.25);
    expect(shares[2]).toContain(0.5);
  });

  it("a cascade's cheaper model is paced by its own limits, apart from the job's model's", async () => {
    // One key, each model its own windows (as on the real APIs): gpt-6-luna at 1,200 a minute enforced per second, gpt-6-sol far above.
    // The 40 cheaper calls go first; leased from gpt-6-sol's pacer (or with its headers setting gpt-6-sol's limits), most would meet a 429.
    const { key } = await limitedTenant(
      { rpm: 60_000, tpm: null, headers: "openai", burst_secs: 1 },
      "openai",
      {},
      { "gpt-6-luna": { rpm: 1_200, tpm: null, headers: "openai", burst_secs: 1 } },
    );
    const tag = uniqueTag("pace-cascade");
    const sure = `json:${encodeURIComponent(JSON.stringify({ keep: true, confidence: 0.99 }))}`;
    const body = {
      inputs: Array.from({ length: 40 }, (_, i) => ({ d: fake(tag, i, sure) })),
      predicate_template: "Keep {{ item.d }}?",
      model: "openai/gpt-6-sol",
      cascade: { model: "openai/gpt-6-luna" },
      concurrency: 16,
      max_retries: 0,
    };
    const started = Date.now();
    const created = await call(base(), "POST", "/v1/filter", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const done = await waitForJob(base(), key, created.body.job_id);
    const ms = Date.now() - started;
    expect(done).toMatchObject({ status: "completed", output: { kept: Array.from({ length: 40 }, (_, i) => i), decided_by: { cascade: 40, model: 0 } } });
    const stats = await fakeStats(tag);
    paced(stats);
    expect(ms).toBeGreaterThanOrEqual(((40 - 20) / 20) * 1_000 * 0.9); // the cheaper model's limit's time: 20 at once, then 20 a second
    expect(done.pacing).toMatchObject({ rpm: null }); // the job's own model has had no call: nothing is known of its limits
    // The cheaper model's pacing is shown beside it, as its headers said.
    expect(done.pacing.models).toEqual({ "openai/gpt-6-luna": { rpm: 1_200, tpm: null, source: "headers", share: 1 } });
    const events = await readSse(await openEvents(base(), key, done.id));
    expect(events.filter((e) => e.event === "PACING_CHANGED").map((e) => e.data.pacing.models?.["openai/gpt-6-luna"]?.rpm)).toContain(1_200);
  });

  it("a pipeline step on another model is paced by that model's limits, not the job's model's", async () => {
    const { key } = await limitedTenant(
      { rpm: 60_000, tpm: null, headers: "openai", burst_secs: 1 },
      "openai",
      {},
      { "gpt-6-luna": { rpm: 1_200, tpm: null, headers: "openai", burst_secs: 1 } },
    );
    const tag = uniqueTag("pace-step");
    const body = {
      model: "openai/gpt-6-sol",
      concurrency: 16,
      max_retries: 0,
      inputs: { items: Array.from({ length: 60 }, (_, i) => i) },
      steps: [
        // The job's model first: its pacer learns gpt-6-sol's high limit. Leased from that pacer, the cheaper step's calls would go out at its pace and meet 429s.
        {
          id: "first",
          type: "llm",
          batch: { items: "${items}", max_concurrent: 16 },
          prompt_template: `First {{ item }} <<fake tag=${tag}-big id={{ item }}>>`,
        },
        {
          id: "each",
          type: "llm",
          model: "openai/gpt-6-luna",
          batch: { items: "${items}", max_concurrent: 16 },
          prompt_template: `Item {{ item }} <<fake tag=${tag} id={{ item }}>>`,
        },
      ],
    };
    const started = Date.now();
    const created = await call(base(), "POST", "/v1/pipelines", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const done = await waitForJob(base(), key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed" });
    expect(done.output).toMatchObject({ count: 60, success_count: 60 });
    paced(await fakeStats(tag));
    expect(Date.now() - started).toBeGreaterThanOrEqual(((60 - 20) / 20) * 1_000 * 0.9);
  });

  it("refuses rate limits out of bounds, with nothing stored", async () => {
    const { key } = await newTenant(base());
    const bad = [{ rate_limit: { rpm: 0 } }, { rate_limit: {} }, { rate_limit: { rpm: 10, extra: 1 } }, { rate_limit: { tpm: 1e12 } }];
    for (const extra of bad) {
      const res = await call(base(), "POST", "/v1/map", { token: key, body: job(uniqueTag("bad"), 1, extra) });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`m${i}`, { rpm: 1 }]));
    for (const rate_limits of [many, { "*": { rpm: -1 } }, JSON.parse('{"__proto__": {"rpm": 5}}')]) {
      const res = await call(base(), "PUT", "/v1/providers/openai", { token: key, body: { api_key: "sk-x", rate_limits } });
      expect(res.status).toBe(400);
    }
    expect((await call(base(), "GET", "/v1/providers", { token: key })).body.providers).toEqual([]);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });

  it("an agent's turns are paced too: 60 one-turn items at concurrency 16 against 1,200 a minute enforced per second", async () => {
    const { key } = await limitedTenant({ rpm: 1_200, tpm: null, headers: "openai", burst_secs: 1 });
    const tag = uniqueTag("pace-agent");
    const started = Date.now();
    const body = {
      inputs: Array.from({ length: 60 }, (_, i) => ({ d: fake(tag, i) })),
      agent_prompt_template: "Answer {{ item.d }}",
      model: "openai/gpt-6-luna",
      concurrency: 16,
      max_turns: 2,
    };
    const created = await call(base(), "POST", "/v1/agentic-map", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const done = await waitForJob(base(), key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", succeeded: 60, failed: 0 });
    const stats = await fakeStats(tag);
    // Unpaced, a session's call meets a 429 once the first second's 20 are spent (each is back-pressure: the session waits and retries).
    paced(stats);
    expect(Date.now() - started).toBeGreaterThanOrEqual(((60 - 20) / 20) * 1_000 * 0.9); // 20 at once, then 20 a second
  });

  it("a key nothing is known of: one call goes first, and the others wait for it 5 s at most", async () => {
    const { key } = await limitedTenant({ rpm: 6_000, tpm: null, headers: "none", burst_secs: 1 });
    const tag = uniqueTag("pace-probe");
    // The first item's call takes 7 s: the probe; the others go out when it has taken 5 s, not when it ends.
    const body = { ...job(tag, 6, {}), inputs: Array.from({ length: 6 }, (_, i) => ({ d: fake(tag, i, "ok", i === 0 ? 7_000 : 10) })), concurrency: 6 };
    const { done, stats } = await run(key, tag, body);
    expect(done).toMatchObject({ status: "completed", succeeded: 6 });
    const [probe, ...others] = stats.times as [number, ...number[]];
    expect(stats.prompts[0]).toContain(`id=0 `);
    for (const t of others) {
      // Times at the fake server: the 5 s are counted from the probe's dispatch, and a first call (a cold
      // worker) reaches the server later than the warm ones after it — 4.81 s once beside a second suite.
      // Well above an unpaced start either way, and before the probe's answer.
      expect(t - probe).toBeGreaterThanOrEqual(4_000);
      expect(t - probe).toBeLessThan(7_000);
    }
    // Answered (without headers): the next job on the key does not probe.
    const next = uniqueTag("pace-probed");
    const again = await run(key, next, { ...job(next, 6, {}), inputs: Array.from({ length: 6 }, (_, i) => ({ d: fake(next, i, "ok", 300) })), concurrency: 6 });
    expect(again.stats.max_in_flight).toBe(6);
  });
});
