/** Restart scenarios of the semantic operators and of batch execution (../restart.e2e.test.ts). */
import { expect } from "vitest";
import { allResults, call, fake, newTenant, openEvents, readSse, waitForJob } from "../harness/api.ts";
import { fakeStats, uniqueTag } from "../harness/context.ts";
import { gated, HELD_TIMEOUT_SECS } from "./jobs.ts";
import { held, openGate, until, type Scenario } from "./server.ts";
import { drawSample, learnThresholds, type SamplePoint } from "../../../src/engine/cascade-target.ts";

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
      const inputs = gated(
        Array.from({ length: n }, (_, i) => ({ t: `item ${i}`, d: fake(tag, i, steps(i), 50) })),
        12,
      );
      const body = {
        inputs,
        predicate_template: "{{ item.t }} {{ item.d }}",
        model: "openai/gpt-6-sol",
        cascade: { model: "openai/gpt-6-luna" },
        concurrency,
        timeout_secs: HELD_TIMEOUT_SECS,
      };
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
 * A filter whose cascade learns its thresholds for a target, killed mid-sample (the gate lets 34
 * of the 42 cheaper and sampled calls through, and holds the rest): after the restart the same sample is answered (drawn from the seed, stored as the
 * `sample` stage's tasks), the thresholds are those the answers give, and every item is decided
 * once — the job ends as an uninterrupted run would.
 */
export function cascadeTargetSurvivesKill(): Scenario {
  const n = 30;
  const tag = uniqueTag("restart-target");
  let key = "";
  let jobId = "";
  const target = { metric: "accuracy" as const, value: 0.6, confidence: 0.5 };
  const cheap = (i: number) => (i % 3 === 2 ? { keep: i % 2 !== 0, confidence: 0.55 } : { keep: i % 2 === 0, confidence: 0.95 });
  const steps = (i: number) => `gpt-6-luna~${json(cheap(i))},gpt-6-sol~${json({ keep: i % 2 === 0 })}`;
  return {
    name: "a cascade learning its thresholds for a target, killed mid-sample, draws the same sample and decides every item once",
    async arm(url) {
      ({ key } = await newTenant(url));
      const inputs = gated(
        Array.from({ length: n }, (_, i) => ({ t: `item ${i}`, d: fake(tag, i, steps(i), 50) })),
        34,
      );
      const cascade = {
        model: "openai/gpt-6-luna",
        target: { metric: target.metric, value: target.value },
        confidence: target.confidence,
        sample: { size: 12 },
        seed: 5,
      };
      const body = {
        inputs,
        predicate_template: "{{ item.t }} {{ item.d }}",
        model: "openai/gpt-6-sol",
        cascade,
        concurrency: 4,
        timeout_secs: HELD_TIMEOUT_SECS,
      };
      jobId = (await call(url, "POST", "/v1/filter", { token: key, body })).body.job_id;
      await until("calls held after 34", () => held(tag));
      const sample = await call(url, "GET", `/v1/jobs/${jobId}`, { token: key });
      const stage = (name: string) => sample.body.stages.find((s: { name: string }) => s.name === name);
      expect(stage("sample").completed).toBeLessThan(12); // the kill comes before the sample is answered
      expect(stage("items").completed).toBe(0); // and before any threshold
    },
    release: () => openGate(tag),
    async check(url) {
      const job = await waitForJob(url, key, jobId, 120_000);
      expect(job.status).toBe("completed");
      // What an uninterrupted run learns from these answers.
      const sampled = drawSample(n, 12, 5);
      const points: SamplePoint[] = sampled.map((i) => ({ kind: "binary", score: keepScore(cheap(i)), oracleKeep: i % 2 === 0 }));
      const others = Array.from({ length: n }, (_, i) => i)
        .filter((i) => !sampled.includes(i))
        .map((i) => keepScore(cheap(i)));
      const learned = learnThresholds(target, points, others);
      expect(job.output.cascade).toMatchObject({
        accept_above: learned.acceptAbove,
        reject_below: learned.rejectBelow,
        met: learned.met,
        sample_size: 12,
        seed: 5,
      });
      expect((await allResults(url, key, jobId, "&stage=sample")).map((r) => r.index)).toEqual(sampled);
      const results = await allResults(url, key, jobId);
      expect(results.map((r) => r.index)).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(results.every((r) => r.output.keep === (r.index % 2 === 0))).toBe(true); // the unsure were the oracle's
      const events = await readSse(await openEvents(url, key, jobId));
      const items = events.filter((e) => e.event === "TASK_COMPLETED" && e.data.stage === "items").map((e) => e.data.index);
      expect(items.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
    },
  };
}

const keepScore = (a: { keep: boolean; confidence: number }) => (a.keep ? a.confidence : 1 - a.confidence);

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

/**
 * A resolve blocked by embeddings, killed with a third of its records placed and the other
 * embeddings held at the fake's gate: after the restart every record is placed once (each
 * `neighbours` task completed once), the comparisons planned once the last is placed are those an
 * uninterrupted run makes, and only the embeddings under way at the kill were sent twice.
 */
export function embeddingBlockingSurvivesKill(): Scenario {
  const n = 30;
  const concurrency = 4;
  const [tag, compareTag] = [uniqueTag("restart-emb"), uniqueTag("restart-emb-cmp")];
  let key = "";
  let jobId = "";
  return {
    name: "a resolve with an embedding blocking, killed mid-placement, places every record once and compares what an uninterrupted run compares",
    async arm(url) {
      ({ key } = await newTenant(url));
      // Ten companies of three records each; `emb` names the company for the fake's embeddings, the first ten pass its gate.
      const inputs = Array.from({ length: n }, (_, i) => ({ i, g: i % 10, emb: `record ${i} <<fake tag=${tag} id=${i} emb=c${i % 10} gate=10>>` }));
      const match = (yes: boolean) => json({ match: yes });
      const body = {
        inputs,
        comparison_template: `{{ item_a.i }} / {{ item_b.i }} <<fake tag=${compareTag} id={{ item_a.i }}-{{ item_b.i }} steps={{ '${match(true)}' if item_a.g == item_b.g else '${match(false)}' }}>>`,
        blocking: { method: "embedding", model: "openai/text-embedding-3-small", keys: ["emb"], top_k: 5 },
        model: "openai/gpt-6-luna",
        concurrency,
        timeout_secs: HELD_TIMEOUT_SECS,
      };
      jobId = (await call(url, "POST", "/v1/resolve", { token: key, body })).body.job_id;
      await until("embeddings held after ten", () => held(tag));
    },
    release: () => openGate(tag),
    async check(url) {
      const job = await waitForJob(url, key, jobId, 120_000);
      const clusters = Array.from({ length: 10 }, (_, g) => [g, g + 10, g + 20]);
      expect(job).toMatchObject({ status: "completed", output: { clusters, failed: 0, embeddings_failed: 0 } });
      const events = await readSse(await openEvents(url, key, jobId));
      const placed = events.filter((e) => e.event === "TASK_COMPLETED" && e.data.stage === "neighbours").map((e) => e.data.index);
      expect(placed.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
      // Each company's three pairs, compared once: the comparisons were planned after the restart, from every record's neighbours.
      expect((await fakeStats(compareTag)).requests).toBe(30);
      const embeddings = (await fakeStats(tag)).requests;
      expect(embeddings).toBeGreaterThanOrEqual(n);
      expect(embeddings).toBeLessThanOrEqual(n + concurrency);
    },
  };
}
