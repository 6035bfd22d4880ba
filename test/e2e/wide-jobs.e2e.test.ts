/**
 * Wider jobs: /v1/map takes concurrency up to 1,000. The coordinator starts its workers in waves
 * (at most BEGINS_PER_INVOCATION per invocation, the platform's subrequest limit in mind), and
 * every slot still runs one call at a time: 600 calls in flight at once, each item answered once.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { BEGINS_PER_INVOCATION } from "../../src/engine/limits.ts";

describe("wide jobs", () => {
  it("runs 600 calls at once at concurrency 600, started in waves", async () => {
    const { key } = await newTenant(base());
    // A job on the model first: the wide one then starts unpaced (a model new to the tenant starts
    // at 16 calls for 250 ms, src/engine/aimd.ts), so its 600 calls all start in its first round.
    const warm = await call(base(), "POST", "/v1/map", { token: key, body: { inputs: ["x"], prompt_template: "{{ item }}", model: "openai/gpt-6-luna" } });
    await waitForJob(base(), key, warm.body.job_id, 30_000);
    const tag = uniqueTag("wide");
    const n = 600;
    expect(n).toBeGreaterThan(BEGINS_PER_INVOCATION); // more than one wave
    const created = await call(base(), "POST", "/v1/map", {
      token: key,
      body: {
        inputs: Array.from({ length: n }, (_, i) => `item ${i} <<fake tag=${tag} id=${i} ms=4000>>`),
        prompt_template: "{{ item }}",
        model: "openai/gpt-6-luna",
        concurrency: n,
      },
    });
    expect(created.status).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id, 60_000);
    expect(job).toMatchObject({ status: "completed", succeeded: n, total_attempts: n });
    const stats = await fakeStats(tag);
    expect(stats.requests).toBe(n);
    expect(stats.max_in_flight).toBe(n);
    expect(new Set((await allResults(base(), key, job.id)).map((r) => r.index)).size).toBe(n);
  });

  it("refuses concurrency past 1,000 with a 400 naming the field", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { inputs: ["x"], prompt_template: "{{ item }}", model: "openai/gpt-6-luna", concurrency: 1001 },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error.details)).toContain("concurrency");
  });
});
