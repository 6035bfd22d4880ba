/**
 * Adaptive concurrency at the object level: the ProviderLimiter's limit, shares and storage.
 * The coordinator's side (the cut, the cap on dispatch, the events, the next job's start) is
 * tested end to end against the fake model's capacity (test/e2e/adaptive-concurrency.e2e.test.ts).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ProviderLimiter } from "../../../durable-objects/provider-limiter";
import { providerLimiter } from "../../../src/objects";

describe("adaptive concurrency: the tenant's limiter for a model", () => {
  it("keeps the limit in its storage, splits it among the jobs, and forgets a job that left", async () => {
    const limiter = providerLimiter(env, "ten_store", "openai/m") as DurableObjectStub<ProviderLimiter>;
    expect(await limiter.join("job_a", 16, 0)).toBe(16); // no limit yet: the job's own concurrency
    expect(await limiter.throttled("job_a", 16, 10, Date.now() - 100)).toBe(8); // 0.8 of the 10 in flight
    expect(await limiter.join("job_b", 16, 0)).toBe(4); // floor(8 / 2)
    expect(await limiter.throttled("job_b", 16, 3, Date.now() - 60_000)).toBe(4); // sent before the cut: the same window (10 − 2 got through)
    expect(await limiter.throttled("job_b", 16, 3, Date.now() - 60_000)).toBe(3); // 10 − 3 = 7 got through: 7 between two jobs
    await limiter.leave("job_a");
    const stored = await runInDurableObject(limiter, async (_i, state) => ({ aimd: await state.storage.get<{ limit: number }>("aimd"), jobs: await state.storage.get<Record<string, unknown>>("jobs") }));
    expect(stored.aimd?.limit).toBe(7);
    expect(Object.keys(stored.jobs ?? {})).toEqual(["job_b"]);
    expect(await limiter.snapshot()).toEqual({ limit: 7, jobs: ["job_b"] });
    // Alone again, job_b gets the whole limit; successes grow it (one per `limit`), up to the jobs' own concurrency.
    expect(await limiter.succeeded("job_b", 16, 7, 7)).toBe(8);
    expect(await limiter.succeeded("job_b", 8, 8, 8)).toBe(8); // at job_b's own concurrency: lifted
    expect((await limiter.snapshot()).limit).toBeNull();
  });

  it("is one per tenant and model: another tenant, or another model, has its own", async () => {
    const a = providerLimiter(env, "ten_x", "openai/m") as DurableObjectStub<ProviderLimiter>;
    await a.join("job_1", 8, 0);
    expect(await a.throttled("job_1", 8, 8, Date.now() - 100)).toBe(6);
    expect(await (providerLimiter(env, "ten_y", "openai/m") as DurableObjectStub<ProviderLimiter>).join("job_2", 8, 0)).toBe(8);
    expect(await (providerLimiter(env, "ten_x", "openai/other") as DurableObjectStub<ProviderLimiter>).join("job_3", 8, 0)).toBe(8);
  });
});
