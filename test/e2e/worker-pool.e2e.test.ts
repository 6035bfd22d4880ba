/**
 * Warm call workers over HTTP: a tenant's next job runs on the worker objects its last job gave
 * back, even when that job was cancelled while its calls were still under way on them. The new
 * job's first tasks wait for those calls to end in their objects, and every item runs once.
 * (The pool's leases, a release by round and a delete's conditional wipe are tested at the object
 * level: test/integration/coordinator/worker-pool.integration.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, scriptedMap, uniqueTag } from "./harness/context.ts";

describe("warm call workers", () => {
  it("starts a tenant's job on the workers a cancelled job left mid-call, and runs each of its items once", async () => {
    const { key } = await newTenant(base());
    const slow = uniqueTag("pool-cancelled");
    const a = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(slow, ["ok", "ok", "ok", "ok"], { concurrency: 4 }, 2_500) });
    expect(a.status).toBe(202);
    for (let i = 0; i < 100 && (await fakeStats(slow)).in_flight < 4; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await fakeStats(slow)).in_flight).toBe(4); // its four calls are under way in its four workers
    expect((await call(base(), "POST", `/v1/jobs/${a.body.job_id}/cancel`, { token: key })).status).toBe(202);

    // The next job borrows the same four objects at once, while the cancelled job's calls still run there.
    const next = uniqueTag("pool-next");
    const b = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(next, Array(8).fill("ok"), { concurrency: 4 }, 100) });
    expect(b.status).toBe(202);
    const done = await waitForJob(base(), key, b.body.job_id, 30_000);
    expect(done).toMatchObject({ status: "completed", succeeded: 8, failed: 0, total_attempts: 8 });
    // Nothing lost and run again, nothing twice: a dispatch the lost-work sweep had to find would be a
    // second attempt of its item (a count, not a wall-time bound: under load the wait moved past 15 s).
    expect((await fakeStats(next)).requests).toBe(8);
    expect(done.usage.interrupted).toEqual({ calls: 0, input_tokens: 0 });
    const cancelled = (await call(base(), "GET", `/v1/jobs/${a.body.job_id}`, { token: key })).body;
    expect(cancelled).toMatchObject({ status: "cancelled", completed: 0 }); // its late answers were not taken
    expect((await fakeStats(slow)).requests).toBe(4);
  });
});
