/**
 * Warm call workers: a tenant's WorkerPool lends each running job a block of worker objects, and
 * the next job runs on the block the last one gave back. The pool's leases, its check of leases a
 * job never gave back, the coordinator's lease and release, and a delete that wipes only what the
 * deleted job left in a worker.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { WorkerPool } from "../../../durable-objects/worker-pool";
import type { CallWorker } from "../../../durable-objects/call-worker";
import type { MapJobSpec } from "../../../src/operators/map/plan";
import { callWorker, workerPool } from "../../../src/objects";
import { capturingLogs } from "../helpers";
import { tenantWithKey } from "../helpers";
import { WorkerLink } from "../../../durable-objects/coordinator/workers";
import { CoordinatorStore } from "../../../durable-objects/coordinator/store";
import { base, call, insertJobRow, meta, startJob, type Stub } from "./drive";

const pool = (tenantId: string) => workerPool(env, tenantId) as DurableObjectStub<WorkerPool>;

describe("worker pool: the tenant's leases", () => {
  it("lends first-fit blocks that never overlap, the same block again to the same job, and frees a block only for its round or a later one", async () => {
    const p = pool("ten_pool_leases");
    expect(await p.lease("job_a", 4, 1)).toEqual({ start: 0, count: 4 });
    expect(await p.lease("job_b", 3, 1)).toEqual({ start: 4, count: 3 });
    expect(await p.lease("job_a", 4, 1)).toEqual({ start: 0, count: 4 }); // asked again (a restarted start): the same
    await p.release("job_a", 1);
    expect(await p.lease("job_c", 2, 1)).toEqual({ start: 0, count: 2 }); // job_a's warm objects
    expect(await p.lease("job_d", 3, 1)).toEqual({ start: 7, count: 3 }); // 2..3 is too small
    // job_c is recovered (round 2) before the release of its round 1 arrives: that release frees nothing.
    expect(await p.lease("job_c", 2, 2)).toEqual({ start: 0, count: 2 });
    await p.release("job_c", 1);
    expect((await p.snapshot()).job_c).toEqual({ start: 0, count: 2 });
    await p.release("job_c", 2);
    expect(await p.snapshot()).toEqual({ job_b: { start: 4, count: 3 }, job_d: { start: 7, count: 3 } });
    // A job that needs more objects than it holds gets a new block.
    expect(await p.lease("job_b", 5, 2)).toEqual({ start: 0, count: 5 }); // its old block is free again for it
  });

  it("asks about leases held for long, and drops those of jobs that no longer run", async () => {
    const live = await startJob((jobId, tenantId) => ({ ...base(jobId, tenantId), type: "map", call: call() }), ["a"]);
    const p = pool("ten_pool_stale");
    const old = Date.now() - 11 * 60_000;
    await runInDurableObject(p, (_i, state) =>
      state.storage.put("leases", {
        job_gone: { start: 0, count: 4, round: 1, checked: old }, // no such job: its coordinator holds nothing
        [live.jobId]: { start: 4, count: 2, round: 1, checked: old },
      }),
    );
    expect(await p.lease("job_new", 4, 1)).toEqual({ start: 0, count: 4 });
    expect(Object.keys(await p.snapshot()).sort()).toEqual([live.jobId, "job_new"].sort());
  });
});

describe("worker pool: jobs and their workers", () => {
  it("runs a tenant's jobs at once on disjoint blocks, and its next job on the block an ended one gave back", async () => {
    const { tenantId } = await tenantWithKey();
    const start = async (concurrency: number): Promise<{ stub: Stub; jobId: string }> => {
      const jobId = `job_${crypto.randomUUID().replaceAll("-", "")}`;
      // A budget no call fits: the job pauses before its first dispatch and holds its block until it ends.
      const spec: MapJobSpec = { ...base(jobId, tenantId), concurrency, budget: { total: 1, onExhausted: "pause" }, type: "map", call: call() };
      await insertJobRow(jobId, tenantId, "map");
      const stub = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(jobId)) as Stub;
      await stub.start(spec, ["a"]);
      return { stub, jobId };
    };
    const first = await start(3);
    const second = await start(2);
    await vi.waitFor(async () => expect(await meta(second.stub, "status")).toBe("paused"), { timeout: 5_000 });
    expect(await meta(first.stub, "workers")).toEqual({ start: 0, count: 3 });
    expect(await meta(second.stub, "workers")).toEqual({ start: 3, count: 2 });
    expect(await first.stub.cancel()).toBe(true);
    expect(await first.stub.holdsWorkers()).toBe(false);
    expect(await second.stub.holdsWorkers()).toBe(true);
    const third = await start(3);
    expect(await meta(third.stub, "workers")).toEqual({ start: 0, count: 3 }); // the first job's objects
    expect(await pool(tenantId).snapshot()).toEqual({ [second.jobId]: { start: 3, count: 2 }, [third.jobId]: { start: 0, count: 3 } });
  });

  it("wipes a worker on a job's delete only while the worker still holds that job's task", async () => {
    const worker = callWorker(env, "ten_purge:w0") as DurableObjectStub<CallWorker>;
    await runInDurableObject(worker, (_i, state) => state.storage.put({ task: { jobId: "job_next", token: "t" }, outcome: null }));
    await worker.purge("job_deleted"); // the object serves another job by now: untouched
    expect(await runInDurableObject(worker, (_i, state) => state.storage.get("task"))).toMatchObject({ jobId: "job_next" });
    await worker.purge("job_next");
    expect(await runInDurableObject(worker, (_i, state) => state.storage.get("task"))).toBeUndefined();
  });

  it("runs a job on workers of its own when the pool cannot be reached", async () => {
    const jobId = "job_pool_down";
    const spec: MapJobSpec = { ...base(jobId, "ten_pool_down"), concurrency: 2, type: "map", call: call() };
    const coordinator = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName("pool-down-test"));
    const names = await runInDurableObject(coordinator, async (_i, state) => {
      const down = {
        ...env,
        WORKER_POOL: {
          idFromName: () => {
            throw new Error("the pool is down");
          },
        },
      } as unknown as Env;
      const link = new WorkerLink(down, new CoordinatorStore(state.storage));
      const { logged } = await capturingLogs(() => link.lease(spec, 1));
      expect(logged).toEqual([expect.stringMatching(/^the worker pool could not be reached; the job runs on workers of its own Error: the pool is down/)]);
      return link.names(spec);
    });
    expect(names).toEqual(["job_pool_down:0", "job_pool_down:1"]);
  });
});
