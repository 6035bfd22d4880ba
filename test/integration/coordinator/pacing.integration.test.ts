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
import { NO_PACING } from "../../../src/engine/pacing";
import { capturingLogs } from "../helpers";

const COST = { tokens: 100, input: 100, output: 0 };
const ask = (jobId: string, calls: number) => ({ jobId, tenant: "ten_a", calls, cost: COST });

describe("the rate pacer of a credential and model", () => {
  it("paces nothing until it knows a limit, then leases what fits and keeps its limits in storage", async () => {
    const pacer = ratePacer(env, "cred_store", "gpt-x") as DurableObjectStub<RatePacer>;
    expect(await pacer.ask(ask("job_a", 40), {})).toMatchObject({ paces: false, lease: { granted: 40 }, source: null });
    const declared = await pacer.ask(ask("job_a", 40), { declared: { rpm: 600, tpm: null } });
    expect(declared).toMatchObject({ paces: true, limits: { rpm: 600, tpm: null }, source: "declared" });
    expect(declared.lease.granted).toBe(5); // half a second of 600 a minute
    expect(declared.lease.waitMs).toBeGreaterThan(0);
    const stored = await runInDurableObject(pacer, async (_i, state) => state.storage.get<{ buckets: Record<string, unknown>; jobs: Record<string, unknown> }>("pacer"));
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

describe("a job's pacing when its pacer cannot be asked", () => {
  it("sends its calls unpaced for a while, without asking again meanwhile", async () => {
    const coordinator = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_pacing_${crypto.randomUUID()}`)) as DurableObjectStub<JobCoordinator>;
    await runInDurableObject(coordinator, async (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      store.setMeta("paces", true); // it was paced before
      store.setMeta("credential", "cred_unreachable");
      let opened = 0;
      const kept = { credential: store.getMeta("credential") ?? null, paces: store.getMeta("paces") ?? false, view: NO_PACING };
      const link = new PacingLink(env, { get: () => kept, set: (part) => Object.assign(kept, part) }, { nextCall: () => ({ prompt: 10, maxTokens: null }), roomOpened: () => opened++, inFlight: () => 0 }, () => undefined, "openai/gpt-x", new OwnLimit());
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
      const pacings = new Pacings(env, store, () => spec, () => job, () => undefined);
      expect(pacings.of("openai/gpt-main")).toBe(pacings.of("openai/gpt-main"));
      const other = pacings.of("openai/gpt-other"); // never joined: it joins now, in the background
      expect(other).not.toBe(pacings.of("openai/gpt-main"));
      await expect.poll(() => store.getMeta("pacing_models")?.["openai/gpt-other"]?.credential ?? null).toMatch(/^[0-9a-f]{32}$/);
      expect(store.getMeta("credential")).toBeUndefined(); // the job's model's state is its own
      // A restart: the other model's link is made again from what it kept, with no second join.
      const again = new Pacings(env, store, () => spec, () => job, () => undefined);
      expect(again.of("openai/gpt-other").model).toBe("openai/gpt-other");
      expect(pacedModels(pipelineLike, spec, [{ name: "steps", kind: "work" }, { name: "a", kind: "work" }, { name: "a.subtasks", kind: "children" }])).toEqual(["openai/gpt-a"]);
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
