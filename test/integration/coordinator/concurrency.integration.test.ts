/**
 * Adaptive concurrency at the object level: the ProviderLimiter's limit, shares and storage, and
 * the paced first round on a model not used lately.
 * The coordinator's side (the cut, the cap on dispatch, the events, the next job's start) is
 * tested end to end against the fake model's capacity (test/e2e/adaptive-concurrency.e2e.test.ts).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ProviderLimiter } from "../../../durable-objects/provider-limiter";
import { providerLimiter } from "../../../src/objects";
import { RAMP_MS } from "../../../src/engine/aimd";
import { encryptionKey } from "../../../src/config";
import { putCredential } from "../../../src/db/providers";
import type { MapJobSpec } from "../../../src/operators/map/plan";
import { base, call, endJob, meta, report, startJob, tick } from "./drive";

describe("adaptive concurrency: the limiter of a credential and model", () => {
  it("keeps the limit in its storage, splits it among the jobs, and forgets a job that left", async () => {
    const limiter = providerLimiter(env, "ten_store", "openai/m") as DurableObjectStub<ProviderLimiter>;
    expect(await limiter.join("job_a", 16, 0)).toBe(16); // no limit yet: the job's own concurrency
    expect(await limiter.throttled("job_a", 16, 10, Date.now() - 100)).toBe(8); // 0.8 of the 10 in flight
    expect(await limiter.join("job_b", 16, 0)).toBe(4); // floor(8 / 2)
    expect(await limiter.throttled("job_b", 16, 3, Date.now() - 60_000)).toBe(4); // sent before the cut: the same window (10 − 2 got through)
    expect(await limiter.throttled("job_b", 16, 3, Date.now() - 60_000)).toBe(3); // 10 − 3 = 7 got through: 7 between two jobs
    await limiter.leave("job_a");
    const stored = await runInDurableObject(limiter, async (_i, state) => ({
      aimd: await state.storage.get<{ limit: number }>("aimd"),
      jobs: await state.storage.get<Record<string, unknown>>("jobs"),
    }));
    expect(stored.aimd?.limit).toBe(7);
    expect(Object.keys(stored.jobs ?? {})).toEqual(["job_b"]);
    expect(await limiter.snapshot()).toEqual({ limit: 7, jobs: ["job_b"] });
    // Alone again, job_b gets the whole limit; successes grow it (one per `limit`), up to the jobs' own concurrency.
    expect(await limiter.succeeded("job_b", 16, 7, 7)).toBe(8);
    expect(await limiter.succeeded("job_b", 8, 8, 8)).toBe(8); // at job_b's own concurrency: lifted
    expect((await limiter.snapshot()).limit).toBeNull();
  });

  it("splits the limit per tenant first, then per job of a tenant", async () => {
    const limiter = providerLimiter(env, "cred_fair", "openai/m") as DurableObjectStub<ProviderLimiter>;
    const a1 = { id: "job_a1", tenant: "ten_a" };
    expect(await limiter.join(a1, 16, 0)).toBe(16);
    expect(await limiter.throttled(a1, 16, 10, Date.now() - 100)).toBe(8); // 0.8 of 10
    expect(await limiter.join({ id: "job_a2", tenant: "ten_a" }, 16, 0)).toBe(4); // tenant a alone: half each
    expect(await limiter.join({ id: "job_b1", tenant: "ten_b" }, 16, 0)).toBe(4); // tenant b: half the limit for its one job
    expect(await limiter.join(a1, 16, 0)).toBe(2); // tenant a's half between its two jobs (the code before: 8 / 3 jobs = 2 each, b too)
  });

  it("is one per name: another credential, or another model, has its own", async () => {
    const a = providerLimiter(env, "ten_x", "openai/m") as DurableObjectStub<ProviderLimiter>;
    await a.join("job_1", 8, 0);
    expect(await a.throttled("job_1", 8, 8, Date.now() - 100)).toBe(6);
    expect(await (providerLimiter(env, "ten_y", "openai/m") as DurableObjectStub<ProviderLimiter>).join("job_2", 8, 0)).toBe(8);
    expect(await (providerLimiter(env, "ten_x", "openai/other") as DurableObjectStub<ProviderLimiter>).join("job_3", 8, 0)).toBe(8);
  });

  it("paces the first round of a model not used lately, lifts it once the pacing ends, and keeps a throttle's cut instead", async () => {
    const limiter = providerLimiter(env, "ten_paced", "openai/m") as DurableObjectStub<ProviderLimiter>;
    expect(await limiter.join("job_a", 64, 0)).toBe(16); // a model never used: INITIAL_WINDOW
    expect(await limiter.join("job_a", 64, 16)).toBe(16); // asked again at once: still paced
    await new Promise((resolve) => setTimeout(resolve, RAMP_MS + 50));
    expect(await limiter.join("job_a", 64, 16)).toBe(64); // no throttle came: lifted
    expect(await limiter.join("job_b", 64, 0)).toBe(64); // the model was used just now: no pacing, no limit
    expect((await limiter.snapshot()).limit).toBeNull();

    const throttled = providerLimiter(env, "ten_paced_429", "openai/m") as DurableObjectStub<ProviderLimiter>;
    expect(await throttled.join("job_c", 64, 0)).toBe(16);
    const sent = Date.now();
    for (let i = 0; i < 8; i++) await throttled.throttled("job_c", 64, 16, sent); // a provider with room for 8
    await new Promise((resolve) => setTimeout(resolve, RAMP_MS + 50));
    expect(await throttled.join("job_c", 64, 8)).toBe(8); // the cut holds: the pacing ended with the throttle's window
  });

  it("paces again a model unused for ten minutes, and not one used a minute ago", async () => {
    const seeded = async (name: string, agoMs: number) => {
      const limiter = providerLimiter(env, name, "openai/m") as DurableObjectStub<ProviderLimiter>;
      await runInDurableObject(limiter, async (_i, state) => {
        await state.storage.put({ aimd: { limit: null, credit: 0, cutAt: 0 }, jobs: {}, seen: Date.now() - agoMs });
      });
      return limiter;
    };
    expect(await (await seeded("ten_idle", 11 * 60_000)).join("job_d", 64, 0)).toBe(16);
    expect(await (await seeded("ten_recent", 60_000)).join("job_e", 64, 0)).toBe(64);
  });
});

describe("adaptive concurrency: whose jobs share a limit", () => {
  it("a throttle on the deployment's key cuts the next job of every tenant without a key of its own; a tenant's own key starts fresh", async () => {
    const model = `openai-compatible/shared-${crypto.randomUUID()}`;
    const spec =
      (concurrency: number) =>
      (jobId: string, tenantId: string): MapJobSpec => ({ ...base(jobId, tenantId), type: "map", call: call({ model }), model, concurrency });
    const { stub: first } = await startJob(spec(8), ["a", "b", "c", "d", "e", "f", "g", "h"]);
    await tick(first);
    const throttled = { kind: "transient", error: "429", retryAfterMs: 1_000, throttled: true, usage: { input_tokens: 0, output_tokens: 0 } } as const;
    await report(first, "items", 0, throttled);
    const cut = await meta<number>(first, "effective");
    expect(cut).toBeLessThan(8);
    // Another tenant on the same (deployment's) key: its job starts at a share of the learned limit.
    const { stub: sharing } = await startJob(spec(8), ["a"]);
    expect(await meta<number>(sharing, "effective")).toBeLessThanOrEqual(cut as number);
    // A tenant with its own key for the provider: nothing learned on it.
    const own = (tenantId: string) =>
      putCredential(env.DB, encryptionKey(env), tenantId, "openai-compatible", `sk-own-${tenantId}`, env.TEST_MODEL_TARPIT, null);
    const { stub: apart } = await startJob(spec(8), ["a"], true, own);
    expect(await meta<number>(apart, "effective")).toBeUndefined();
    expect(await meta<string>(apart, "credential")).not.toBe(await meta<string>(first, "credential"));
    // Ended here: a throttled task's retry, due in a second, would otherwise ask its pacer after the file's runtime is gone.
    for (const stub of [first, sharing, apart]) await endJob(stub);
  });
});

describe("adaptive concurrency: only where no rate limit is known", () => {
  it("a throttle of a model the pacer paces (its headers said its limits) does not cut the calls in flight; without headers it does", async () => {
    const model = `openai-compatible/paced-${crypto.randomUUID()}`;
    const spec = (jobId: string, tenantId: string): MapJobSpec => ({ ...base(jobId, tenantId), type: "map", call: call({ model }), model, concurrency: 8 });
    const rate = { requests: { limit: 600, remaining: 500 }, at: Date.now() };
    const throttle = (headers: boolean) =>
      ({
        kind: "transient",
        error: "429",
        retryAfterMs: 1_000,
        throttled: true,
        usage: { input_tokens: 0, output_tokens: 0 },
        ...(headers ? { rate } : {}),
      }) as const;
    const { stub: paced } = await startJob(spec, ["a", "b", "c"]);
    await tick(paced);
    await report(paced, "items", 0, { kind: "success", output: "x", usage: { input_tokens: 1, output_tokens: 1 }, rate }); // the headers: paced from now on
    await report(paced, "items", 1, throttle(true));
    expect(await meta<number>(paced, "effective")).toBeUndefined(); // the code before cut it to 0.8 of the calls in flight
    // The same throttle on a model nothing is known of: adaptive concurrency cuts.
    const other = `openai-compatible/unpaced-${crypto.randomUUID()}`;
    const { stub: unpaced } = await startJob((jobId, tenantId) => ({ ...spec(jobId, tenantId), call: call({ model: other }), model: other }), ["a", "b", "c"]);
    await tick(unpaced);
    await report(unpaced, "items", 1, throttle(false));
    expect(await meta<number>(unpaced, "effective")).toBeLessThan(8);
    for (const stub of [paced, unpaced]) await endJob(stub); // no retry asks a pacer after the file's runtime is gone
  });
});
