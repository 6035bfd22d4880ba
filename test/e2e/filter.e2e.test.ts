/**
 * POST /v1/filter over HTTP, through the real OpenAI SDK against the fake model: each item's call
 * answers `{keep, reason}` (the fake builds its answer from the schema the call requested, or says
 * exactly what a test scripts); the job's output lists the kept indices in input order, counts the
 * dropped and the failed; `results?kept=` pages either side; bad requests are refused with
 * nothing stored.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, openEvents, readSse, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const MODEL = "openai/gpt-6-luna";
const answer = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;
const DROP = answer({ keep: false, reason: "not about translation" });

const filterBody = (tag: string, steps: string[], extra: Record<string, unknown> = {}) => ({
  inputs: steps.map((s, i) => ({ title: `paper ${i}`, d: fake(tag, i, s) })),
  predicate_template: "Is this paper about machine translation? {{ item.title }} {{ item.d }}",
  model: MODEL,
  concurrency: 4,
  max_retries: 0,
  ...extra,
});

describe("POST /v1/filter", () => {
  it("keeps the items that meet the predicate: the kept indices in input order, the dropped and failed counted", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("filter");
    const created = await call(base(), "POST", "/v1/filter", { token: key, body: filterBody(tag, ["ok", DROP, "ok", DROP, "401", "ok"]) });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ type: "filter", status: "completed", total: 6, succeeded: 5, failed: 1 });
    expect(job.output).toEqual({ kept: [0, 2, 5], dropped: 2, failed: 1 });
    expect((await fakeStats(tag)).requests).toBe(6);

    const results = await allResults(base(), key, job.id);
    // The fake answers "ok" with a value built from the requested schema: `keep` true, `reason` a string.
    expect(results[0]).toMatchObject({ index: 0, success: true, output: { keep: true, reason: expect.any(String) }, error_kind: null });
    expect(results[1]).toMatchObject({ index: 1, success: true, output: { keep: false, reason: "not about translation" } });
    expect(results[4]).toMatchObject({ index: 4, success: false, output: null, error_kind: "llm_error" });
    expect((await allResults(base(), key, job.id, "&kept=true")).map((r) => r.index)).toEqual([0, 2, 5]);
    expect((await allResults(base(), key, job.id, "&kept=false")).map((r) => r.index)).toEqual([1, 3]);

    const events = await readSse(await openEvents(base(), key, job.id));
    expect(events[0]).toMatchObject({ event: "MAP_STARTED", data: { type: "filter", total: 6 } });
    expect(events.at(-1)).toMatchObject({ event: "MAP_COMPLETED", data: { status: "completed", output: { kept: [0, 2, 5], dropped: 2, failed: 1 } } });
  });

  it("answers ?wait=true with the job and its output, and estimates a dry run", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("filter-wait");
    const body = filterBody(tag, ["ok", DROP]);
    const dry = await call(base(), "POST", "/v1/filter?dry_run=true", { token: key, body });
    expect(dry.status).toBe(200);
    expect(dry.body.estimate).toMatchObject({ calls: 2 });
    expect((await fakeStats(tag)).requests).toBe(0);
    const done = await call(base(), "POST", "/v1/filter?wait=true", { token: key, body });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ type: "filter", status: "completed", output: { kept: [0], dropped: 1, failed: 0 } });
  });

  it("a cascade: the cheaper model answers every item first; only the unsure (and a failed cheaper call) reach the job's model", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("filter-cascade");
    // Each item's steps are consumed one per call: the cheaper model's answer first, then the job's model's.
    const steps = [
      answer({ keep: true, confidence: 0.97, reason: "sure" }), // kept by the cascade
      answer({ keep: false, confidence: 0.95 }), // dropped by the cascade (keep-confidence 0.05)
      `${answer({ keep: true, confidence: 0.6 })},${DROP}`, // unsure: the job's model drops it
      `500,${answer({ keep: true })}`, // the cheaper call fails: the job's model keeps it
    ];
    const body = filterBody(tag, steps, { model: "openai/gpt-6-sol", cascade: { model: "openai/gpt-6-luna" } });
    const created = await call(base(), "POST", "/v1/filter", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job.output).toEqual({ kept: [0, 3], dropped: 2, failed: 0, decided_by: { cascade: 2, model: 2 } });
    expect(job.stages.map((s: any) => [s.name, s.total, s.succeeded, s.failed])).toEqual([
      ["cascade", 4, 3, 1],
      ["items", 4, 4, 0],
    ]);
    const stats = await fakeStats(tag);
    expect(stats.requests).toBe(6);
    expect(stats.models.filter((m: string) => m === "gpt-6-luna")).toHaveLength(4);
    expect(stats.models.filter((m: string) => m === "gpt-6-sol")).toHaveLength(2);

    const results = await allResults(base(), key, job.id);
    expect(results.map((r) => [r.index, r.decided_by, r.output?.keep])).toEqual([
      [0, "cascade", true],
      [1, "cascade", false],
      [2, "model", false],
      [3, "model", true],
    ]);
    expect(results[0]).toMatchObject({
      input: { title: "paper 0" },
      output: { keep: true, reason: "sure", confidence: 0.97 },
      usage: { input_tokens: 0, output_tokens: 0 },
    });
    const cheap = await allResults(base(), key, job.id, "&stage=cascade");
    expect(cheap.map((r) => r.success)).toEqual([true, true, true, false]);
    expect(cheap[0].usage.input_tokens).toBeGreaterThan(0); // the cheaper model's tokens are its stage's
  });

  it("refuses cascade thresholds that leave nothing to the job's model", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/filter", {
      token: key,
      body: { ...filterBody(uniqueTag("filter-th"), ["ok"]), cascade: { model: MODEL, accept_above: 0.5, reject_below: 0.5 } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: "cascade.reject_below" })]);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });

  it("refuses a predicate that does not read `item`, an unknown field and `kept` on another job's results, with nothing stored", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("filter-bad");
    const noItem = await call(base(), "POST", "/v1/filter", {
      token: key,
      body: { ...filterBody(tag, ["ok"]), predicate_template: "Is it about translation?" },
    });
    expect(noItem.status).toBe(400);
    expect(noItem.body.error.details).toEqual([expect.objectContaining({ path: "predicate_template" })]);
    const unknown = await call(base(), "POST", "/v1/filter", { token: key, body: { ...filterBody(tag, ["ok"]), output_schema: { type: "object" } } });
    expect(unknown.status).toBe(400);
    const big = await call(base(), "POST", "/v1/filter", {
      token: key,
      body: { ...filterBody(tag, ["ok"]), predicate_template: `{{ item }}${"x".repeat(100_001)}` },
    });
    expect(big.status).toBe(413);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
    expect((await fakeStats(tag)).requests).toBe(0);

    const map = await call(base(), "POST", "/v1/map?wait=true", { token: key, body: { inputs: [fake(tag, 0)], prompt_template: "{{ item }}", model: MODEL } });
    const kept = await call(base(), "GET", `/v1/jobs/${map.body.job_id}/results?kept=true`, { token: key });
    expect(kept.status).toBe(400);
    expect(kept.body.error).toMatchObject({ code: "invalid_request", details: [{ path: "kept" }] });
  });
});
