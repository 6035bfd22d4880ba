/**
 * Adaptive concurrency over HTTP against the fake model's capacity (`cap=K`: past K calls in
 * flight for the tag, a call is answered 429 with Retry-After 1): the job cuts its calls in
 * flight (CONCURRENCY_CHANGED, `effective_concurrency`), loses nothing, and the next job on the
 * key and model — the tenant's, or another tenant's on the same key — starts at the learned limit
 * instead of hammering the provider again; a job on another key starts at its own concurrency.
 * Each test's tenant has a provider key of its own (the limit is the key's).
 */
import { describe, expect, it } from "vitest";
import { call, openEvents, readSse, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { ownKeyTenant } from "./harness/limited-key.ts";

// An OpenAI-like server that sends no rate-limit headers (vLLM, say): adaptive concurrency is its only limit,
// and a fresh key of it is not probed by the rate pacer (a fresh OpenAI key's first call would go alone).
const MODEL = "openai-compatible/gpt-6-luna";
/** `n` items for the fake model; `fake`: the directives each answer follows (by default a provider with room for 4). */
const job = (tag: string, n: number, concurrency: number, fake = "cap=4 ms=150") => ({
  inputs: Array.from({ length: n }, (_, i) => `item ${i} <<fake tag=${tag} id=${i} ${fake}>>`),
  prompt_template: "{{ item }}",
  model: MODEL,
  concurrency,
  max_retries: 10,
});

async function run(key: string, body: unknown) {
  const created = await call(base(), "POST", "/v1/map", { token: key, body });
  expect(created.status).toBe(202);
  const done = await waitForJob(base(), key, created.body.job_id, 90_000);
  const events = await readSse(await openEvents(base(), key, created.body.job_id));
  return { job: done, changes: events.filter((e) => e.event === "CONCURRENCY_CHANGED").map((e) => e.data) };
}

describe("adaptive concurrency under a provider's 429s", () => {
  it("cuts the calls in flight when throttled, loses nothing, and starts the key's next job at the learned limit", async () => {
    const owner = await ownKeyTenant();
    const key = owner.key;
    const first = uniqueTag("cap-first");
    const { job: one, changes } = await run(key, job(first, 32, 16));
    expect(one).toMatchObject({ status: "completed", succeeded: 32, failed: 0 });
    expect(changes.length).toBeGreaterThan(0);
    expect(changes[0]).toMatchObject({ job_id: one.id, reason: "throttled" });
    expect(Math.min(...changes.map((c) => c.effective_concurrency))).toBeLessThanOrEqual(8);
    expect(one.effective_concurrency).toBeLessThan(16);
    const firstStats = await fakeStats(first);
    expect(firstStats.requests - firstStats.throttled).toBe(32); // every item answered once

    // The same tenant and model: the next job starts at the limit (its first round is smaller than
    // the first job's 16). How often each is throttled after that depends on when the calls end,
    // not on the design: beside a second suite the second job met 20 429s to the first's 14.
    const second = uniqueTag("cap-second");
    const { job: two, changes: twoChanges } = await run(key, job(second, 32, 16));
    expect(two).toMatchObject({ status: "completed", succeeded: 32 });
    expect(twoChanges[0]).toMatchObject({ reason: "shared" });
    expect(twoChanges[0].effective_concurrency).toBeLessThan(16);
    const secondStats = await fakeStats(second);
    expect(secondStats.requests - secondStats.throttled).toBe(32); // every item answered once

    // Another tenant on the same provider key: its job starts at the key's learned limit too.
    const sharing = await ownKeyTenant(base(), owner.providerKeys);
    const shared = uniqueTag("cap-sharing");
    const { job: four, changes: sharingChanges } = await run(sharing.key, job(shared, 8, 16));
    expect(four).toMatchObject({ status: "completed", succeeded: 8 });
    expect(sharingChanges[0]).toMatchObject({ reason: "shared" });
    expect(sharingChanges[0].effective_concurrency).toBeLessThan(16);

    // A tenant on a key of its own has learned nothing yet: its job starts at its own concurrency.
    const other = await ownKeyTenant();
    const third = uniqueTag("cap-other");
    const { changes: otherChanges } = await run(other.key, job(third, 8, 8));
    expect(otherChanges.filter((c) => c.reason === "shared")).toEqual([]);
    expect(otherChanges[0]).toMatchObject({ reason: "throttled", effective_concurrency: 6 }); // 0.8 of its whole first round of 8
  });

  it("does nothing for a job that is never throttled", async () => {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag("cap-none");
    const { job: done, changes } = await run(key, job(tag, 12, 6, "ms=100"));
    expect(done).toMatchObject({ status: "completed", succeeded: 12, effective_concurrency: 6 });
    expect(changes).toEqual([]);
    expect((await fakeStats(tag)).max_in_flight).toBe(6);
  });

  it("does not shrink for throttles that come whatever the load: a provider that answers one call in ten 429", async () => {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag("cap-sporadic");
    // Every tenth item is answered 429 (Retry-After 1) once, at any concurrency: cutting cannot help.
    const inputs = Array.from({ length: 200 }, (_, i) => `item ${i} <<fake tag=${tag} id=${i} ${i % 10 === 3 ? "steps=429:1,ok " : ""}ms=100>>`);
    const { job: done, changes } = await run(key, { ...job(tag, 200, 20), inputs });
    expect(done).toMatchObject({ status: "completed", succeeded: 200, failed: 0 });
    // A new tenant's model: the first round is paced (src/engine/aimd.ts); the throttles cut, during
    // the pacing or after its lift (which comes first depends on the machine's load).
    expect(changes[0]).toMatchObject({ reason: "shared", effective_concurrency: 16 });
    expect(changes.some((c) => c.reason === "throttled")).toBe(true);
    // The first cuts are taken back once the throttled share stays where it was: the job ends at its own concurrency.
    expect(done.effective_concurrency).toBe(20);
    expect(changes.at(-1)).toMatchObject({ effective_concurrency: 20 });
    const stats = await fakeStats(tag);
    expect(stats.requests).toBe(220); // each throttled item once more, nothing else
    expect(stats.max_in_flight).toBeGreaterThan(15); // it ran near its concurrency again after the undo
  });

  it("paces a tenant's first round on a model for a job that asks for more than 16, and lifts the pacing when nothing is throttled", async () => {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag("cap-paced");
    const { job: done, changes } = await run(key, job(tag, 64, 32, "ms=400"));
    expect(done).toMatchObject({ status: "completed", succeeded: 64, effective_concurrency: 32 });
    expect(changes).toEqual([
      { job_id: done.id, effective_concurrency: 16, reason: "shared" },
      { job_id: done.id, effective_concurrency: 32, reason: "recovered" },
    ]);
    const stats = await fakeStats(tag);
    expect(stats.max_in_flight).toBe(32); // the pacing ended before the first round did
    expect(stats.requests).toBe(64);
  });

  it("a provider with room for 8 throttles one paced round of a 48-wide job's first calls, not all of them", async () => {
    const { key } = await ownKeyTenant();
    const tag = uniqueTag("cap-paced-8");
    const { job: done, changes } = await run(key, job(tag, 96, 48, "cap=8 ms=150"));
    expect(done).toMatchObject({ status: "completed", succeeded: 96, failed: 0 });
    expect(changes[0]).toMatchObject({ reason: "shared", effective_concurrency: 16 });
    expect(changes[1]).toMatchObject({ reason: "throttled" });
    const stats = await fakeStats(tag);
    expect(stats.requests - stats.throttled).toBe(96);
    expect(stats.throttled).toBeLessThanOrEqual(16); // without the pacing, the first round alone: 40
  });
});
