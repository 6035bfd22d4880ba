/**
 * Pacing at the object level: the RatePacer of a credential and model (its limits in storage,
 * leases, a job that leaves), and a job's PacingLink when its pacer fails. The pacing itself is
 * tested end to end against the fake model's enforced windows (test/e2e/pacing.e2e.test.ts).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JobCoordinator } from "../../../durable-objects/job-coordinator";
import type { RatePacer } from "../../../durable-objects/rate-pacer";
import { OwnLimit, PacingLink } from "../../../durable-objects/coordinator/pacing";
import { pacedModels, Pacings } from "../../../durable-objects/coordinator/pacings";
import { CoordinatorStore } from "../../../durable-objects/coordinator/store";
import type { JobSpecBase } from "../../../src/engine/types";
import { ratePacer } from "../../../src/objects";
import { MAX_SHARED_BLOCK_MS, NO_PACING, type PacerState } from "../../../src/engine/pacing";
import { capturingLogs } from "../helpers";

const COST = { tokens: 100, input: 100, output: 0 };
const ask = (jobId: string, calls: number) => ({ jobId, tenant: "ten_a", calls, cost: COST });

describe("the rate pacer of a credential and model", () => {
  it("holds the circuit of its credential and model: a tenant's jobs hear of their own tenant's opening, another tenant's once two tenants found it down; an answer closes it for all", async () => {
    const pacer = ratePacer(env, "cred_circuit", "gpt-x") as DurableObjectStub<RatePacer>;
    const as = (tenant: string, circuit?: { openUntil: number }) =>
      pacer.ask({ jobId: `job_${tenant}`, tenant, calls: 0, cost: COST }, circuit ? { circuit } : {}).then((a) => a.circuitOpenUntil);
    const until = Date.now() + 30_000;
    expect(await as("ten_a", { openUntil: until })).toBe(until);
    expect(await as("ten_a")).toBe(until); // its own tenant's next job
    expect(await as("ten_b")).toBe(0); // one tenant's outages (its own inputs, perhaps) hold no other tenant back
    expect(await as("ten_c", { openUntil: until + 1_000 })).toBe(until + 1_000);
    expect(await as("ten_b")).toBe(until + 1_000); // two tenants found it down: it is down for everyone
    expect(await as("ten_a", { openUntil: Date.now() + 3_600_000 })).toBeLessThanOrEqual(Date.now() + 10 * 60_000); // bounded
    expect(await as("ten_c", { openUntil: 0 })).toBe(0); // an answer: the model is up
    expect(await as("ten_a")).toBe(0);
    expect(await as("ten_b")).toBe(0);
  });

  it("paces nothing until it knows a limit, then leases what fits and keeps its limits in storage", async () => {
    const pacer = ratePacer(env, "cred_store", "gpt-x") as DurableObjectStub<RatePacer>;
    expect(await pacer.ask(ask("job_a", 40), {})).toMatchObject({ paces: false, lease: { granted: 40 }, source: null });
    const declared = await pacer.ask(ask("job_a", 40), { declared: { rpm: 600, tpm: null } });
    expect(declared).toMatchObject({ paces: true, limits: { rpm: 600, tpm: null }, source: "declared" });
    expect(declared.lease.granted).toBe(5); // half a second of 600 a minute
    expect(declared.lease.waitMs).toBeGreaterThan(0);
    const stored = await runInDurableObject(pacer, async (_i, state) =>
      state.storage.get<{ buckets: Record<string, unknown>; jobs: Record<string, unknown> }>("pacer"),
    );
    expect(Object.keys(stored?.buckets ?? {})).toEqual(["requests"]);
    expect(Object.keys(stored?.jobs ?? {})).toEqual(["job_a"]);
    await pacer.leave("job_a");
    const after = await runInDurableObject(pacer, async (_i, state) => state.storage.get<{ jobs: Record<string, unknown> }>("pacer"));
    expect(after?.jobs).toEqual({});
  });

  it("takes the calls a job sent before the limits were known from its buckets", async () => {
    const pacer = ratePacer(env, "cred_unleased", "gpt-x") as DurableObjectStub<RatePacer>;
    const seen = { requests: { limit: 6_000, remaining: 100 }, at: Date.now() - 60_000 }; // learned a minute ago: a full bucket of 100
    await pacer.ask(ask("job_a", 0), { seen });
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await pacer.ask(ask("job_b", 0), { unleased: { calls: 60, cost: COST } })).paces).toBe(true);
    expect((await pacer.ask(ask("job_b", 100), {})).lease.granted).toBeLessThanOrEqual(41);
  });
});

/** A job's PacingLink for openai/gpt-x, whose next call's prompt is estimated at `prompt` tokens; `opened()`: how often it said there is room. */
function testLink(prompt = 10) {
  let opened = 0;
  const kept = { credential: null as string | null, paces: false, view: NO_PACING };
  const link = new PacingLink(
    env,
    { get: () => kept, set: (part) => Object.assign(kept, part) },
    { nextCall: () => ({ prompt, maxTokens: null }), roomOpened: () => opened++, inFlight: () => 0 },
    () => undefined,
    "openai/gpt-x",
    new OwnLimit(),
  );
  return { link, opened: () => opened };
}

describe("a provider's retry-after on a pacer shared by tenants", () => {
  const tenDaysMs = 864_000_000;

  it("blocks another tenant's calls for at most MAX_SHARED_BLOCK_MS, and a stored ten-day block is cut back when the object loads", async () => {
    const pacer = ratePacer(env, "cred_shared_block", "gpt-x") as DurableObjectStub<RatePacer>;
    await pacer.ask(ask("job_a", 0), { declared: { rpm: 6_000, tpm: null } });
    await pacer.ask(ask("job_a", 0), { seen: { retryAfterMs: tenDaysMs } }); // tenant A's item met a spent quota's retry-after
    const other = await pacer.ask({ ...ask("job_b", 5), tenant: "ten_b" }, {});
    expect(other.lease.granted).toBe(0);
    expect(other.lease.waitMs).toBeGreaterThan(0);
    expect(other.lease.waitMs).toBeLessThanOrEqual(MAX_SHARED_BLOCK_MS);

    // A pacer whose storage says ten days (written before the bound): its first answer waits no longer than the bound.
    const stale = ratePacer(env, "cred_stored_block", "gpt-x") as DurableObjectStub<RatePacer>;
    const state: PacerState = { buckets: {}, source: null, blockedUntil: Date.now() + tenDaysMs, jobs: {}, grants: [] };
    await runInDurableObject(stale, async (_i, s) => s.storage.put("pacer", state));
    await stale.ask(ask("job_c", 0), { declared: { rpm: 6_000, tpm: null } });
    const after = await stale.ask(ask("job_c", 5), {});
    expect(after.lease.waitMs).toBeLessThanOrEqual(MAX_SHARED_BLOCK_MS);
    const stored = await runInDurableObject(stale, async (_i, s) => s.storage.get<PacerState>("pacer"));
    expect(stored?.blockedUntil).toBeLessThanOrEqual(Date.now() + MAX_SHARED_BLOCK_MS);
  });

  it("a job's link counts the time its pacer granted nothing while it wanted calls, and forgets it at the next grant", async () => {
    const coordinator = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_starved_${crypto.randomUUID()}`)) as DurableObjectStub<JobCoordinator>;
    const credential = `cred_starved_${crypto.randomUUID()}`;
    await runInDurableObject(coordinator, async () => {
      const { link } = testLink();
      const spec = { jobId: "job_starved", tenantId: "ten_a", model: "openai/gpt-x", concurrency: 4 } as JobSpecBase;
      await link.join(spec, credential, { rpm: 6_000, tpm: null });
      await ratePacer(env, credential, "openai/gpt-x").ask({ ...ask("job_other", 0), tenant: "ten_b" }, { seen: { retryAfterMs: tenDaysMs } });
      expect(link.starvedFor(Date.now())).toBe(0);
      link.want(spec, 3);
      await expect.poll(() => link.starvedFor(Date.now() + 1)).toBeGreaterThan(0); // the pacer answered: nothing granted
      expect(link.room(spec)).toBe(0);
      link.started(spec); // a call went out (a grant came): the wait is over
      expect(link.starvedFor(Date.now() + 1)).toBe(0);
    });
  });
});

describe("the tokens a lease reserves", () => {
  it("are corrected by the provider's count of the prompts: a measured ratio, once three calls have reported", async () => {
    const coordinator = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_ratio_${crypto.randomUUID()}`)) as DurableObjectStub<JobCoordinator>;
    const credential = `cred_ratio_${crypto.randomUUID()}`;
    await runInDurableObject(coordinator, async () => {
      // Each prompt is estimated at 10 tokens; the provider counts 40 (a tokenizer's count, a schema sent with it).
      const { link, opened: openedCount } = testLink(10);
      const spec = { jobId: "job_ratio", tenantId: "ten_a", model: "openai/gpt-x", concurrency: 16 } as JobSpecBase;
      await link.join(spec, credential, { rpm: 60_000, tpm: 12_000 }); // a bucket of 100 tokens: 10 calls of 10, 2 of 40
      const leased = async () => {
        const before = openedCount();
        link.want(spec, 10);
        await expect.poll(() => openedCount()).toBeGreaterThan(before);
        const room = link.room(spec);
        for (let i = 0; i < room; i++) link.started(spec);
        return room;
      };
      expect(await leased()).toBe(10);
      const report = { kind: "success", output: {}, usage: { input_tokens: 40, output_tokens: 0 } } as const;
      for (let i = 0; i < 3; i++) link.observe(spec, report);
      await new Promise((r) => setTimeout(r, 1_100)); // the bucket refills (100 tokens in half a second)
      expect(await leased()).toBeLessThanOrEqual(3); // 40 a call now: 2 fit, and what refills while the ask is under way
    });
  });
});

describe("a job's pacing when its pacer cannot be asked", () => {
  it("sends its calls unpaced for a while, without asking again meanwhile", async () => {
    const coordinator = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_pacing_${crypto.randomUUID()}`)) as DurableObjectStub<JobCoordinator>;
    await runInDurableObject(coordinator, async (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      store.setMeta("paces", true); // it was paced before
      store.setMeta("credential", "cred_unreachable");
      let opened = 0;
      const kept = { credential: store.getMeta("credential") ?? null, paces: store.getMeta("paces") ?? false, view: NO_PACING };
      const link = new PacingLink(
        env,
        { get: () => kept, set: (part) => Object.assign(kept, part) },
        { nextCall: () => ({ prompt: 10, maxTokens: null }), roomOpened: () => opened++, inFlight: () => 0 },
        () => undefined,
        "openai/gpt-x",
        new OwnLimit(),
      );
      // An ask that cannot be delivered (its tenant id is not data: the call fails before it leaves, as an unreachable object's does).
      const spec = { jobId: "job_x", tenantId: new WeakMap() as unknown as string, model: "openai/gpt-x", concurrency: 4 } as JobSpecBase;
      expect(link.room(spec)).toBe(0); // paced, nothing leased yet
      const { logged } = await capturingLogs(async () => {
        link.want(spec, 3);
        await expect.poll(() => opened).toBe(1); // the dispatch goes on
      });
      expect(logged).toEqual([expect.stringMatching(/^the rate pacer could not be reached; the job's calls go out unpaced for 5 s DataCloneError/)]);
      expect(link.room(spec)).toBe(Infinity); // unpaced
      link.started(spec);
      link.want(spec, 3); // no second ask (it would fail the same way, at once)
      await new Promise((r) => setTimeout(r, 50));
      expect(opened).toBe(1);
    });
  });
});

describe("a job's pacing per model", () => {
  it("keeps another model's link apart from the job's model's, and joins a model it did not join at the start at its first use", async () => {
    const coordinator = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_pacings_${crypto.randomUUID()}`)) as DurableObjectStub<JobCoordinator>;
    await runInDurableObject(coordinator, async (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      const spec = { jobId: `job_${crypto.randomUUID()}`, tenantId: "ten_pacings", model: "openai/gpt-main", concurrency: 4 } as JobSpecBase;
      const job = { nextCall: () => null, roomOpened: () => undefined, inFlight: () => 0 };
      const pacings = new Pacings(
        env,
        store,
        () => spec,
        () => job,
        () => undefined,
      );
      expect(pacings.of("openai/gpt-main")).toBe(pacings.of("openai/gpt-main"));
      const other = pacings.of("openai/gpt-other"); // never joined: it joins now, in the background
      expect(other).not.toBe(pacings.of("openai/gpt-main"));
      await expect.poll(() => store.getMeta("pacing_models")?.["openai/gpt-other"]?.credential ?? null).toMatch(/^[0-9a-f]{32}$/);
      expect(store.getMeta("credential")).toBeUndefined(); // the job's model's state is its own
      // A restart: the other model's link is made again from what it kept, with no second join.
      const again = new Pacings(
        env,
        store,
        () => spec,
        () => job,
        () => undefined,
      );
      expect(again.of("openai/gpt-other").model).toBe("openai/gpt-other");
      expect(
        pacedModels(pipelineLike, spec, [
          { name: "steps", kind: "work" },
          { name: "a", kind: "work" },
          { name: "a.subtasks", kind: "children" },
        ]),
      ).toEqual(["openai/gpt-a"]);
    });
  });
});

/** An operator with a stage that calls no model (it throws), one that does, and children (skipped). */
const pipelineLike = {
  work: (_spec: JobSpecBase, stage: string) => {
    if (stage === "steps") throw new Error("no model call");
    return { kind: "call", tenantId: "t", call: { model: "openai/gpt-a" } };
  },
} as unknown as Parameters<typeof pacedModels>[0];
