/** Restart scenarios of the semantic operators and of batch execution (../restart.e2e.test.ts). */
import { expect } from "vitest";
import { allResults, call, fake, newTenant, openEvents, readSse, waitForJob } from "../harness/api.ts";
import { fakeStats, uniqueTag } from "../harness/context.ts";
import { gated, HELD_TIMEOUT_SECS } from "./jobs.ts";
import { held, openGate, until, type Scenario } from "./server.ts";

const json = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;

/**
 * A filter with a cascade, killed with cheaper calls and calls of the job's model under way: every
 * item decided once, by the level the answers say, and only the calls under way sent twice.
 */
export function cascadeDecidesOnce(): Scenario {
  const n = 30;
  const concurrency = 4;
  const tag = uniqueTag("restart-cascade");
  let key = "";
  let jobId = "";
  // i % 3 = 0: the cheaper model keeps it; 1: drops it; 2: unsure, the job's model drops it. One
  // answer an item, whichever level asks (a call held at the kill may take its step after the restart).
  const steps = (i: number) => json({ keep: i % 3 === 0, confidence: i % 3 === 2 ? 0.5 : 0.95 });
  return {
    name: "a filter with a cascade decides every item once, at the level its answers say",
    async arm(url) {
      ({ key } = await newTenant(url));
      const inputs = gated(Array.from({ length: n }, (_, i) => ({ t: `item ${i}`, d: fake(tag, i, steps(i), 50) })), 12);
      const body = { inputs, predicate_template: "{{ item.t }} {{ item.d }}", model: "openai/gpt-4o", cascade: { model: "openai/gpt-6-luna" }, concurrency, timeout_secs: HELD_TIMEOUT_SECS };
      jobId = (await call(url, "POST", "/v1/filter", { token: key, body })).body.job_id;
      await until("calls held after twelve", () => held(tag));
    },
    release: () => openGate(tag),
    async check(url) {
      const job = await waitForJob(url, key, jobId, 120_000);
      const kept = Array.from({ length: n }, (_, i) => i).filter((i) => i % 3 === 0);
      expect(job).toMatchObject({ status: "completed", output: { kept, dropped: n - kept.length, failed: 0, decided_by: { cascade: 20, model: 10 } } });
      const results = await allResults(url, key, jobId);
      expect(results.map((r) => [r.index, r.decided_by])).toEqual(Array.from({ length: n }, (_, i) => [i, i % 3 === 2 ? "model" : "cascade"]));
      const events = await readSse(await openEvents(url, key, jobId));
      const items = events.filter((e) => e.event === "TASK_COMPLETED" && e.data.stage === "items").map((e) => e.data.index);
      expect(items.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
      // 30 cheaper calls and 10 of the job's model; only the calls under way at the kill (one per slot) were sent twice.
      const stats = await fakeStats(tag);
      expect(stats.requests).toBeGreaterThanOrEqual(40);
      expect(stats.requests).toBeLessThanOrEqual(40 + concurrency);
    },
  };
}

/**
 * A map in batch mode, killed while its provider batch runs (held at the tag's gate): after the
 * restart the coordinator polls the same batch from its storage and settles its lines; nothing is
 * submitted again (nothing paid twice) and every item has one result.
 */
export function batchSurvivesKill(): Scenario {
  const n = 6;
  const tag = uniqueTag("restart-batch");
  let key = "";
  let jobId = "";
  return {
    name: "a map in batch mode killed mid-batch polls the same batch after the restart: nothing submitted twice",
    async arm(url) {
      ({ key } = await newTenant(url));
      const inputs = Array.from({ length: n }, (_, i) => `item ${i} <<fake tag=${tag} id=${i} steps=ok gate=0>>`);
      const body = { inputs, prompt_template: "{{ item }}", model: "openai/gpt-6-luna", execution: { mode: "batch" } };
      jobId = (await call(url, "POST", "/v1/map", { token: key, body })).body.job_id;
      await until("the batch submitted", async () => (await call(url, "GET", `/v1/jobs/${jobId}`, { token: key })).body.batches?.[0]?.provider_batch_id);
    },
    release: () => openGate(tag),
    async check(url) {
      const job = await waitForJob(url, key, jobId, 120_000);
      expect(job).toMatchObject({ status: "completed", succeeded: n, total_attempts: n });
      expect(job.batches).toHaveLength(1);
      expect(job.batches[0]).toMatchObject({ status: "ended", requests: n });
      expect((await allResults(url, key, jobId)).map((r) => r.index)).toEqual(Array.from({ length: n }, (_, i) => i));
      const stats = await fakeStats(tag);
      expect([stats.requests, stats.batched]).toEqual([n, n]); // the lines ran once, in the one batch
    },
  };
}
