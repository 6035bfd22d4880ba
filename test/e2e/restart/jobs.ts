/** Restart scenarios of jobs without agents: map, fold, map-reduce, pipeline (../restart.e2e.test.ts). */
import { expect } from "vitest";
import { allResults, call, ECHO_SCHEMA, newTenant, openEvents, readSse, waitForJob } from "../harness/api.ts";
import { fakeStats, scriptedMap, uniqueTag } from "../harness/context.ts";
import { ownKeyTenant } from "../harness/limited-key.ts";
import { held, openGate, until, type Scenario } from "./server.ts";

/** Long enough that no call held at a gate times out while the other scenarios get ready. */
export const HELD_TIMEOUT_SECS = 120;

/** The fake model directives of `inputs` (scriptedMap's `d`) with a gate letting `k` calls through. */
export function gated<T extends { d: string }>(inputs: T[], k: number): T[] {
  return inputs.map((input) => ({ ...input, d: input.d.replace(">>", ` gate=${k}>>`) }));
}

/** Calls under way at the kill, 429 retries waiting in the Queue: one result per index, nothing lost, nothing twice. */
export function mapLosesNothing(): Scenario {
  const n = 60;
  const tag = uniqueTag("restart");
  let key = "";
  let jobId = "";
  return {
    name: "a map job loses nothing and duplicates nothing",
    async arm(url) {
      ({ key } = await ownKeyTenant(url)); // its 429s cut its own key's limit, not the other scenarios'
      const steps = Array.from({ length: n }, (_, i) => (i % 7 === 3 ? "429:1,ok" : "ok"));
      const body = scriptedMap(tag, steps, { concurrency: 4, timeout_secs: HELD_TIMEOUT_SECS }, 50);
      body.inputs = gated(body.inputs, 12);
      jobId = (await call(url, "POST", "/v1/map", { token: key, body })).body.job_id;
      // Not four: the 429s among the first twelve calls lower the job's concurrency.
      await until("calls held after twelve", () => held(tag));
    },
    release: () => openGate(tag),
    async check(url) {
      const job = await waitForJob(url, key, jobId, 120_000);
      expect(job).toMatchObject({ status: "completed", total: n, completed: n, succeeded: n, failed: 0 });
      const results = await allResults(url, key, jobId);
      expect(results.map((r) => r.index)).toEqual(Array.from({ length: n }, (_, i) => i));
      const events = await readSse(await openEvents(url, key, jobId));
      const items = events.filter((e) => e.event === "MAP_ITEM_COMPLETED").map((e) => e.data.result.index);
      expect(items).toHaveLength(n);
      expect(new Set(items).size).toBe(n);
      expect(events.map((e) => e.id)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
      expect(events.at(-1)?.data).toMatchObject({ status: "completed", completed: n });
    },
  };
}

/** The calls under way at the kill run again as soon as the server is back, not after their timeout. */
export function mapRunsAgainAtOnce(): Scenario {
  const n = 40;
  const tag = uniqueTag("restart-prompt");
  let key = "";
  let jobId = "";
  return {
    name: "a map job's calls under way at the kill run again at once",
    async arm(url) {
      ({ key } = await newTenant(url));
      const body = scriptedMap(
        tag,
        Array.from({ length: n }, () => "ok"),
        { concurrency: 4, timeout_secs: HELD_TIMEOUT_SECS },
        250,
      );
      body.inputs = gated(body.inputs, 12);
      jobId = (await call(url, "POST", "/v1/map", { token: key, body })).body.job_id;
      await until("four calls held after twelve", () => held(tag, 4));
    },
    release: () => openGate(tag),
    async check(url, restart) {
      const job = await waitForJob(url, key, jobId, 100_000);
      expect(job).toMatchObject({ status: "completed", completed: n, succeeded: n });
      const results = await allResults(url, key, jobId);
      expect(results.map((r) => r.index)).toEqual(Array.from({ length: n }, (_, i) => i));
      const stats = await fakeStats(tag);
      // ~28 calls at 4 × 250 ms: seconds after the restart; left to their timeout, the 4 slots would stay taken for 120 s.
      expect((stats.times.at(-1) as number) - restart.up).toBeLessThan(30_000);
      // Only the calls under way at the kill (one per slot) were sent twice, and each is counted:
      // an attempt more, and an interrupted call the provider may have billed.
      expect(stats.requests).toBeGreaterThanOrEqual(n);
      expect(stats.requests).toBeLessThanOrEqual(n + 4);
      const resent = (stats.requests as number) - n;
      expect(job.total_attempts).toBe(n + resent);
      expect(job.usage.interrupted.calls).toBe(resent);
      // Each re-sent prompt is the one its interrupted call sent: its tokens, counted by the re-sent call's answer.
      expect(job.usage.interrupted.input_tokens > 0).toBe(resent > 0);
      expect(job.usage.interrupted.input_tokens).toBeLessThanOrEqual(job.usage.input_tokens);
    },
  };
}

/** A fold killed midway: the accumulator of an uninterrupted run, every reduction in order, one result per task. */
export function foldEndsTheSame(): Scenario {
  const n = 24;
  const tag = uniqueTag("foldrestart");
  let key = "";
  let jobId = "";
  return {
    name: "a fold ends with the accumulator of an uninterrupted run",
    async arm(url) {
      ({ key } = await newTenant(url));
      const body = {
        inputs: Array.from({ length: n }, (_, i) => `a${i}`),
        initial_value: "",
        inner_task: { prompt_template: `{{ item }} <<fake tag=${tag} id=i{{ index }} ms=60 gate=20>>`, output_schema: ECHO_SCHEMA },
        reduction_task: {
          prompt_template: `{{ accumulator.echo if accumulator else '' }}+{{ current_result.echo }} <<fake tag=${tag} id=r{{ index }} ms=80 gate=20>>`,
          output_schema: ECHO_SCHEMA,
        },
        model: "openai/gpt-6-luna",
        concurrency: 4,
        timeout_secs: HELD_TIMEOUT_SECS,
      };
      jobId = (await call(url, "POST", "/v1/reduce", { token: key, body })).body.job_id;
      await until("calls held after twenty", () => held(tag));
      const reductions = await call(url, "GET", `/v1/jobs/${jobId}/results?stage=reduction`, { token: key });
      expect(reductions.body.results.length).toBeGreaterThan(0); // killed in the middle of the fold, not before it
    },
    release: () => openGate(tag),
    async check(url) {
      const job = await waitForJob(url, key, jobId, 120_000);
      const expected = Array.from({ length: n }, (_, i) => `+a${i}`).join("");
      expect(job).toMatchObject({ status: "completed", total: 2 * n, succeeded: 2 * n, failed: 0, output: { echo: expected } });
      const reductions = await allResults(url, key, jobId, "&stage=reduction");
      expect(reductions.map((r) => r.index)).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(reductions.at(-1)?.accumulator.echo).toBe(expected);
      const events = await readSse(await openEvents(url, key, jobId));
      const done = events.filter((e) => e.event === "TASK_COMPLETED").map((e) => `${e.data.stage}:${e.data.index}`);
      expect(new Set(done).size).toBe(done.length);
      expect(done).toHaveLength(2 * n);
      const order = events.filter((e) => e.event === "TASK_COMPLETED" && e.data.stage === "reduction").map((e) => e.data.index);
      expect(order).toEqual(Array.from({ length: n }, (_, i) => i));
    },
  };
}

/** Killed in the reduce stage: the job completes and no reducer (or mapper) call that had finished runs again. */
export function mapReduceRunsNothingTwice(): Scenario {
  const groups = 12;
  const [tm, tr] = [uniqueTag("mr-map"), uniqueTag("mr-red")];
  let key = "";
  let jobId = "";
  let finished: string[] = [];
  return {
    name: "a map-reduce job killed in its reduce stage runs no finished call again",
    async arm(url) {
      ({ key } = await newTenant(url));
      const category = (g: number) => encodeURIComponent(JSON.stringify([{ category: `k${String(g).padStart(2, "0")}` }]));
      const body = {
        inputs: Array.from({ length: groups }, (_, g) => `doc <<fake tag=${tm} id=m${g} steps=json:${category(g)}>>`),
        model: "openai/gpt-6-luna",
        mapper: { prompt_template: "{{ item }}" },
        docs_per_mapper: 1,
        max_parallel_mappers: 3,
        reducer: { prompt_template: `reduce {{ key }} {{ items | length }} <<fake tag=${tr} ms=50 gate=2>>`, output_schema: ECHO_SCHEMA },
        reduction_strategy: "category",
        timeout_secs: HELD_TIMEOUT_SECS,
      };
      const created = await call(url, "POST", "/v1/map-reduce", { token: key, body });
      expect([created.status, created.body.error]).toEqual([202, undefined]);
      jobId = created.body.job_id;
      finished = await until("two reducers finished, the others held", async () => {
        const page = await call(url, "GET", `/v1/jobs/${jobId}/results?stage=reduce`, { token: key });
        const keys = (page.body.results ?? []).map((r: any) => r.key as string);
        return keys.length >= 2 && (await held(tr)) && keys;
      });
      expect(finished).toHaveLength(2);
    },
    release: () => openGate(tr),
    async check(url) {
      const job = await waitForJob(url, key, jobId, 120_000);
      expect(job.status).toBe("completed");
      expect(job.output.map((r: any) => r.key)).toEqual(Array.from({ length: groups }, (_, g) => `k${String(g).padStart(2, "0")}`));
      const prompts = (await fakeStats(tr)).prompts;
      for (const k of finished) expect(prompts.filter((p) => p.startsWith(`reduce ${k} `))).toHaveLength(1);
      expect((await fakeStats(tm)).requests).toBe(groups); // no mapper ran twice either
    },
  };
}

const stage = (job: any, name: string) => job.stages?.find((s: any) => s.name === name);

/**
 * A pipeline killed twice: in the middle of a batch step (the first restart), then after that
 * step finished while the next one runs (the second). The same output as an uninterrupted run,
 * no finished step runs again, and every batch element has exactly one result.
 */
export function pipelineKilledTwice(): { midBatch: Scenario; betweenSteps: Scenario } {
  const n = 30;
  const [ta, tb, tc] = [uniqueTag("pa"), uniqueTag("pb"), uniqueTag("pc")];
  let key = "";
  let jobId = "";
  const job = async (url: string) => (await call(url, "GET", `/v1/jobs/${jobId}`, { token: key })).body;
  const midBatch: Scenario = {
    name: "a pipeline killed in the middle of a batch step",
    async arm(url) {
      ({ key } = await newTenant(url));
      const body = {
        model: "openai/gpt-6-luna",
        inputs: { list: Array.from({ length: n }, (_, i) => `e${i}`) },
        timeout_secs: HELD_TIMEOUT_SECS,
        steps: [
          { id: "a", type: "llm", prompt_template: `start <<fake tag=${ta} ms=50>>`, output_schema: ECHO_SCHEMA },
          {
            id: "b",
            type: "llm",
            batch: { items: "${list}", max_concurrent: 4 },
            prompt_template: `{{ item }} <<fake tag=${tb} id={{ item }} ms=80 gate=10>>`,
            output_schema: ECHO_SCHEMA,
          },
          {
            id: "c",
            type: "llm",
            prompt_template: `{{ b.results | map(attribute='echo') | join(',') }} <<fake tag=${tc} ms=50 gate=0>>`,
            output_schema: ECHO_SCHEMA,
          },
        ],
      };
      const created = await call(url, "POST", "/v1/pipelines", { token: key, body });
      expect(created.status).toBe(202);
      jobId = created.body.job_id;
      await until("ten elements of the batch step done, the next held", async () => (stage(await job(url), "b")?.completed ?? 0) >= 10 && held(tb));
    },
    release: () => openGate(tb), // checked after the second restart, by `betweenSteps`
  };
  const betweenSteps: Scenario = {
    name: "the same pipeline killed again between two steps",
    async arm(url) {
      await until("the batch step done, the next step's call held", async () => {
        const now = await job(url);
        return stage(now, "b")?.status === "completed" && stage(now, "c")?.status === "running" && held(tc);
      });
    },
    release: () => openGate(tc),
    async check(url) {
      const done = await waitForJob(url, key, jobId, 120_000);
      const expected = Array.from({ length: n }, (_, i) => `e${i}`).join(",");
      expect(done).toMatchObject({ status: "completed", output: { echo: expected } });
      expect((await fakeStats(ta)).requests).toBe(1); // the first step never ran again
      const elements = await allResults(url, key, jobId, "&stage=b");
      expect(elements.map((e) => [e.index, e.item])).toEqual(Array.from({ length: n }, (_, i) => [i, `e${i}`]));
      const events = await readSse(await openEvents(url, key, jobId));
      const completed = events.filter((e) => e.event === "TASK_COMPLETED").map((e) => `${e.data.stage}:${e.data.index}`);
      expect(new Set(completed).size).toBe(completed.length);
      expect(completed).toHaveLength(1 + n + 1 + 3); // a, b's elements, c, and the three step markers
    },
  };
  return { midBatch, betweenSteps };
}
