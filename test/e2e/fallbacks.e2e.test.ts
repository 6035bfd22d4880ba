/**
 * Fallback chains (contract v4, "Providers as they fail"), over HTTP through the real SDKs against
 * the fake model, whose models are scripted apart (`MODEL~STEP`): an item whose model is
 * unavailable — an outage (500), no capacity (529; OpenAI's 429 resource_unavailable), unknown or
 * retired (404 model_not_found), its quota spent — goes to the next model of the job's
 * `fallbacks`, across providers, and its result says which model answered; invalid output never
 * falls back; an item no model of its chain could answer fails `unavailable`; bad chains are 400s
 * with nothing stored. Each tenant has keys of its own: an outage must not reach other tests' pacing.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, waitForJob } from "./harness/api.ts";
import { base, fakeStats, fakeUrl, uniqueTag } from "./harness/context.ts";
import { limitedTenant, ownKeyTenant } from "./harness/limited-key.ts";

const PRIMARY = "gpt-6-sol";
const SECOND = "claude-sonnet-4-6";
const THIRD = "gpt-6-luna";
const FALLBACKS = [`anthropic/${SECOND}`, `openai/${THIRD}`];

const mapJob = (tag: string, steps: (i: number) => string, n: number, extra: Record<string, unknown> = {}) => ({
  inputs: Array.from({ length: n }, (_, i) => ({ d: fake(tag, i, steps(i)) })),
  prompt_template: "Summarize {{ item.d }}",
  output_schema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
  model: `openai/${PRIMARY}`,
  fallbacks: FALLBACKS,
  max_retries: 1,
  concurrency: 4,
  ...extra,
});

async function run(body: Record<string, unknown>) {
  const { key } = await ownKeyTenant();
  const created = await call(base(), "POST", "/v1/map", { token: key, body });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  const done = await waitForJob(base(), key, created.body.job_id);
  const results = (await allResults(base(), key, created.body.job_id)).sort((a, b) => a.index - b.index);
  return { done, results };
}

describe("fallback chains", () => {
  it("an item whose model is unavailable goes to the next model: an outage, no capacity, a retired model, a spent quota — each answered by the fallback, the result naming it", async () => {
    const tag = uniqueTag("fb-kinds");
    const failures = ["500", "529", "busy", "gone", "quota:864000"];
    const { done, results } = await run(mapJob(tag, (i) => `${PRIMARY}~${failures[i]},${SECOND}~ok`, failures.length));
    expect(done).toMatchObject({ status: "completed", succeeded: failures.length, failed: 0, pause_reason: null });
    for (const result of results) {
      // The unavailable call and the fallback's answer: two calls, neither against max_retries.
      expect(result, failures[result.index]).toMatchObject({ success: true, model: `anthropic/${SECOND}`, attempts: 2, error_kind: null });
    }
    expect((await fakeStats(tag)).requests).toBe(2 * failures.length);
  });

  it("goes down the chain in order: the second model down too, the third answers; a model that answers keeps its items", async () => {
    const tag = uniqueTag("fb-chain");
    const { done, results } = await run(mapJob(tag, (i) => (i < 2 ? `${PRIMARY}~500,${SECOND}~529,${THIRD}~ok` : "ok"), 4));
    expect(done).toMatchObject({ status: "completed", succeeded: 4 });
    expect(results.map((r) => [r.model, r.attempts])).toEqual([
      [`openai/${THIRD}`, 3],
      [`openai/${THIRD}`, 3],
      [`openai/${PRIMARY}`, 1],
      [`openai/${PRIMARY}`, 1],
    ]);
  });

  it("outages in a row open the model's circuit: later items go straight to the fallback without a call to it; the job view shows each model's circuit and answers", async () => {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag("fb-circuit");
    const created = await call(base(), "POST", "/v1/map", {
      token: key,
      body: mapJob(tag, () => `${PRIMARY}~500,${SECOND}~ok`, 8, { concurrency: 1, fallbacks: [`anthropic/${SECOND}`] }),
    });
    const done = await waitForJob(base(), key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", succeeded: 8 });
    const results = (await allResults(base(), key, created.body.job_id)).sort((a, b) => a.index - b.index);
    // One at a time: the first three items each met the outage; it opened the circuit, and the other five never called the model.
    expect(results.map((r) => r.attempts)).toEqual([2, 2, 2, 1, 1, 1, 1, 1]);
    expect((await fakeStats(tag)).requests).toBe(3 + 8);
    expect(done.models).toEqual([
      { model: `openai/${PRIMARY}`, circuit: expect.stringMatching(/^(open|half_open)$/), answered: 0 }, // half open once its cool-down (30 s) is over
      { model: `anthropic/${SECOND}`, circuit: "closed", answered: 8 },
    ]);
  });

  it("one item the provider keeps failing (a poison input) never opens the circuit: the job's other items go on calling the model", async () => {
    const tenant = await ownKeyTenant();
    const tag = uniqueTag("fb-poison");
    const body = mapJob(tag, (i) => (i === 0 ? "500" : "ok"), 6, { fallbacks: undefined, concurrency: 1, max_retries: 3 });
    const created = await call(base(), "POST", "/v1/map", { token: tenant.key, body });
    const done = await waitForJob(base(), tenant.key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", succeeded: 5, failed: 1 });
    const results = (await allResults(base(), tenant.key, created.body.job_id)).sort((a, b) => a.index - b.index);
    expect(results[0]).toMatchObject({ success: false, error_kind: "llm_error", attempts: 4 });
    expect(results.slice(1).every((r) => r.attempts === 1)).toBe(true);
  });

  it("a circuit is shared by the jobs on its credential and model: a job started after another's outages opened it sends its items straight to the fallback", async () => {
    const tenant = await ownKeyTenant();
    const outage = await fetch(`${fakeUrl()}/_fake/outage`, { method: "POST", body: JSON.stringify({ key: tenant.providerKeys.openai, ms: 600_000 }) });
    expect(outage.status).toBe(204);
    const second = [`anthropic/${SECOND}`];
    const first = uniqueTag("fb-shared-a");
    const a = await call(base(), "POST", "/v1/map", { token: tenant.key, body: mapJob(first, () => "ok", 6, { concurrency: 1, fallbacks: second }) });
    const doneA = await waitForJob(base(), tenant.key, a.body.job_id);
    expect(doneA).toMatchObject({ status: "completed", succeeded: 6 });
    expect(doneA.models[0].circuit).toMatch(/^(open|half_open)$/);
    // The next job on the same key and model has made no call of its own to the model that is down: its pacer told it.
    const later = uniqueTag("fb-shared-b");
    const b = await call(base(), "POST", "/v1/map", { token: tenant.key, body: mapJob(later, () => "ok", 6, { concurrency: 1, fallbacks: second }) });
    const doneB = await waitForJob(base(), tenant.key, b.body.job_id);
    expect(doneB).toMatchObject({ status: "completed", succeeded: 6 });
    const results = await allResults(base(), tenant.key, b.body.job_id);
    expect(results.map((r) => [r.model, r.attempts])).toEqual(Array.from({ length: 6 }, () => [`anthropic/${SECOND}`, 1]));
    expect((await fakeStats(later)).models.filter((m: string) => m === PRIMARY)).toEqual([]);
  });

  it("a pipeline step on a model of its own takes its own fallbacks: its calls go down its chain; a bad chain is 400 at its path", async () => {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag("fb-step");
    const body = {
      model: `openai/${THIRD}`,
      inputs: { topic: "tides" },
      steps: [
        {
          id: "draft",
          type: "llm",
          model: `openai/${PRIMARY}`,
          fallbacks: [`anthropic/${SECOND}`],
          inputs: { topic: "${topic}" },
          prompt_template: `Draft on {{ topic }} <<fake tag=${tag} id=draft steps=${PRIMARY}~500,${SECOND}~ok>>`,
          output_schema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
        },
      ],
    };
    const created = await call(base(), "POST", "/v1/pipelines", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const done = await waitForJob(base(), key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", error: null });
    const [draft] = await allResults(base(), key, created.body.job_id, "&stage=draft");
    expect(draft).toMatchObject({ success: true, model: `anthropic/${SECOND}`, attempts: 2 });
    // A step's own chain is checked as the job's is: its model repeated is 400, nothing stored.
    const bad = structuredClone(body);
    bad.steps[0]!.fallbacks = [`openai/${PRIMARY}`];
    const refused = await call(base(), "POST", "/v1/pipelines", { token: key, body: bad });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ path: "fallbacks[0]", message: `a call's own, on openai/${PRIMARY}: is its model itself` }]);
    bad.steps[0]!.fallbacks = "anthropic/x" as never;
    const malformed = await call(base(), "POST", "/v1/pipelines", { token: key, body: bad });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details).toEqual([{ path: "steps[0].fallbacks", message: expect.stringContaining("at most 3 models") }]);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toHaveLength(1);
  });

  it("a cascade's cheaper model takes fallbacks of its own: down, its items' cheaper answers come from its fallback", async () => {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag("fb-cascade");
    const sure = encodeURIComponent(JSON.stringify({ keep: true, reason: "r", confidence: 0.99 }));
    const body = {
      inputs: [0, 1].map((i) => `item ${i} <<fake tag=${tag} id=${i} steps=${THIRD}~500,claude-haiku-4-5~json:${sure}>>`),
      predicate_template: "Keep? {{ item }}",
      model: `openai/${PRIMARY}`,
      cascade: { model: `openai/${THIRD}`, fallbacks: ["anthropic/claude-haiku-4-5"], score: "self_reported" },
    };
    const created = await call(base(), "POST", "/v1/filter", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const done = await waitForJob(base(), key, created.body.job_id);
    expect(done.output).toMatchObject({ kept: [0, 1], decided_by: { cascade: 2, model: 0 } });
    const cheaper = await allResults(base(), key, created.body.job_id, "&stage=cascade");
    for (const r of cheaper) expect(r).toMatchObject({ success: true, model: "anthropic/claude-haiku-4-5", attempts: 2 });
  });

  it("invalid output never falls back: it retries on its own model and fails validation there", async () => {
    const tag = uniqueTag("fb-invalid");
    const { results } = await run(mapJob(tag, () => `${PRIMARY}~bad,${SECOND}~ok`, 2));
    for (const result of results) expect(result).toMatchObject({ success: false, error_kind: "validation", model: `openai/${PRIMARY}`, attempts: 2 });
    expect((await fakeStats(tag)).requests).toBe(4); // none went to the fallback
  });

  it("an item no model of its chain can answer fails `unavailable` on the last one, after its retries there", async () => {
    const tag = uniqueTag("fb-none");
    const { done, results } = await run(mapJob(tag, () => "gone", 2));
    expect(done).toMatchObject({ status: "completed", succeeded: 0, failed: 2 });
    for (const result of results) expect(result).toMatchObject({ success: false, error_kind: "unavailable", model: `openai/${THIRD}`, attempts: 3 });
  });

  it("a model that cannot take an item within max_wait_secs (a ten-day retry-after blocking its paced key) sends it to the fallback instead of failing it rate_limited", async () => {
    const { key } = await limitedTenant({ rpm: 6_000, tpm: null, headers: "openai", burst_secs: 1 });
    const tag = uniqueTag("fb-starved");
    const body = mapJob(tag, () => `${PRIMARY}~429:864000,${SECOND}~ok`, 1, { max_retries: 0, max_wait_secs: 2, fallbacks: [`anthropic/${SECOND}`] });
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    const done = await waitForJob(base(), key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", succeeded: 1, failed: 0 });
    const [result] = await allResults(base(), key, created.body.job_id);
    expect(result).toMatchObject({ success: true, model: `anthropic/${SECOND}`, error_kind: null });
  });

  it("a job without fallbacks is as before: an outage is retried on its model, its results carry no model", async () => {
    const tag = uniqueTag("fb-off");
    const { results } = await run(mapJob(tag, () => "500,ok", 2, { fallbacks: undefined }));
    for (const result of results) {
      expect(result).toMatchObject({ success: true, attempts: 2 });
      expect(result.model).toBeUndefined();
    }
  });

  it("without a fallback, an open circuit is back-pressure: the items wait without a call, and fail `unavailable` once the model has been down past max_wait_secs", async () => {
    const tenant = await ownKeyTenant();
    const outage = await fetch(`${fakeUrl()}/_fake/outage`, { method: "POST", body: JSON.stringify({ key: tenant.providerKeys.openai, ms: 600_000 }) });
    expect(outage.status).toBe(204);
    const tag = uniqueTag("fb-wait");
    // One slot, retries to spare: items 0–2 meet the outage in turn (a waiting retry holds no slot; three items: the circuit
    // opens), then nobody calls the model.
    const body = mapJob(tag, () => "ok", 5, { fallbacks: undefined, concurrency: 1, max_retries: 10, max_wait_secs: 2 });
    const created = await call(base(), "POST", "/v1/map", { token: tenant.key, body });
    const done = await waitForJob(base(), tenant.key, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", succeeded: 0, failed: 5 });
    const results = await allResults(base(), tenant.key, created.body.job_id);
    for (const result of results)
      expect(result).toMatchObject({ success: false, error_kind: "unavailable", error: expect.stringContaining("max_wait_secs (2)") });
    expect((await fakeStats(tag)).requests).toBe(3);
  });

  it("refuses chains that cannot work with 400 at the exact path, storing nothing", async () => {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag("fb-bad");
    const refused = async (extra: Record<string, unknown>, path = "/v1/map", body: Record<string, unknown> = mapJob(tag, () => "ok", 1, extra)) => {
      const answer = await call(base(), "POST", path, { token: key, body });
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      return answer.body.error;
    };
    expect((await refused({ fallbacks: [`openai/${PRIMARY}`] })).details).toEqual([{ path: "fallbacks[0]", message: "the job's: is its model itself" }]);
    expect((await refused({ fallbacks: [`openai/${THIRD}`, `openai/${THIRD}`] })).details).toEqual([
      { path: "fallbacks[1]", message: "the job's: repeats fallbacks[0]" },
    ]);
    expect((await refused({ fallbacks: ["a/1", "b/2", "c/3", "d/4"] })).code).toBe("invalid_request");
    expect((await refused({ fallbacks: ["nowhere/model"] })).code).toBe("unknown_provider");
    const agent = { inputs: [{ d: "x" }], agent_prompt_template: "Go {{ item.d }}", model: `openai/${PRIMARY}`, fallbacks: [`openai/${THIRD}`] };
    expect((await refused({}, "/v1/agentic-map", agent)).details).toEqual([{ path: "fallbacks", message: expect.stringContaining("call stages only") }]);
    const jobs = await call(base(), "GET", "/v1/jobs", { token: key });
    expect(jobs.body.jobs).toEqual([]);
  });
});
