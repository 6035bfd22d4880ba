/**
 * Fairness between tenants: one tenant's long job does not hold up another tenant's small one.
 * Tenant A's 200 items at concurrency 50 (L = 1 s) take at least 4 s; tenant B's 5 items (L =
 * 300 ms) submitted while A runs finish while A still has most of its items to go. Were jobs
 * queued behind one another, B would wait for A (4 s or more).
 */
import { describe, expect, it } from "vitest";
import { call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const body = (tag: string, n: number, ms: number, concurrency: number) => ({
  inputs: Array.from({ length: n }, (_, i) => `item ${i} <<fake tag=${tag} id=${i} ms=${ms}>>`),
  prompt_template: "{{ item }}",
  model: "openai/gpt-6-luna",
  concurrency,
});

describe("fairness between tenants", () => {
  it("finishes a small job of one tenant while another tenant's long job runs, long before that job ends", async () => {
    const [a, b] = [await newTenant(base()), await newTenant(base())];
    const [bigTag, smallTag] = [uniqueTag("fair-big"), uniqueTag("fair-small")];
    const big = await call(base(), "POST", "/v1/map", { token: a.key, body: body(bigTag, 200, 1_000, 50) });
    await expect.poll(async () => (await fakeStats(bigTag)).in_flight, { timeout: 10_000 }).toBe(50); // A at full speed
    const small = await call(base(), "POST", "/v1/map", { token: b.key, body: body(smallTag, 5, 300, 5) });
    const done = await waitForJob(base(), b.key, small.body.job_id, 20_000);
    expect(done).toMatchObject({ status: "completed", succeeded: 5 });
    // B ended while A was still under way with most of its items to go: B was not queued behind A.
    // (Conditions, not A's calls in flight at one instant nor a wall-time bound: both moved under load.
    // A loaded machine can leave all of A's workers between two calls at once; A calls on after B ended.)
    const sent = (await fakeStats(bigTag)).requests;
    const bigNow = (await call(base(), "GET", `/v1/jobs/${big.body.job_id}`, { token: a.key })).body;
    expect(bigNow.status).toBe("running");
    expect(bigNow.completed).toBeLessThan(150);
    await expect.poll(async () => (await fakeStats(bigTag)).requests, { timeout: 20_000 }).toBeGreaterThan(sent);
    await call(base(), "POST", `/v1/jobs/${big.body.job_id}/cancel`, { token: a.key });
  });
});
