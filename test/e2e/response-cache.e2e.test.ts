/**
 * The response cache over HTTP with the fake model: its per-tag counters prove which calls were
 * made. Reuse within a tenant and TTL, `cached: true` results at no tokens, usage counted apart,
 * never across tenants or without the opt-in, an output reached by a retry, dry-run counts,
 * recover of a map-reduce job paying only for what changed, and bad settings refused.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, ECHO_SCHEMA, fake, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, scriptedMap, uniqueTag } from "./harness/context.ts";

const CACHE = { cache: { ttl_secs: 3600 } };

async function runMap(key: string, body: Record<string, unknown>) {
  const res = await call(base(), "POST", "/v1/map", { token: key, body });
  expect(res.status).toBe(202);
  const job = await waitForJob(base(), key, res.body.job_id);
  return { job, results: await allResults(base(), key, job.id) };
}

describe("the response cache", () => {
  it("answers an identical call of the same tenant from the cache: cached results, no tokens, usage counted apart", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("cache");
    const body = scriptedMap(tag, ["ok", "ok", "ok"], CACHE);
    const first = await runMap(key, body);
    expect(first.job).toMatchObject({ status: "completed", succeeded: 3 });
    expect(first.results.every((r) => r.cached === undefined)).toBe(true);
    expect(first.job.usage.cached).toEqual({ calls: 0, input_tokens: 0, output_tokens: 0 });
    expect((await fakeStats(tag)).requests).toBe(3);

    const second = await runMap(key, body);
    expect((await fakeStats(tag)).requests).toBe(3); // no call made
    expect(second.job).toMatchObject({ status: "completed", succeeded: 3, total_attempts: 3 });
    expect(second.results.map((r) => r.cached)).toEqual([true, true, true]);
    expect(second.results.map((r) => r.output)).toEqual(first.results.map((r) => r.output));
    expect(second.results.every((r) => r.usage.input_tokens === 0 && r.usage.output_tokens === 0)).toBe(true);
    expect(second.job.cost_usd).toBe(0); // nothing was paid for
    expect(second.job.usage).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cached_input_tokens: 0,
      cache_write_input_tokens: 0,
      duplicated: { input_tokens: 0, output_tokens: 0, cost_usd: 0 },
      cached: { calls: 3, input_tokens: first.job.usage.input_tokens, output_tokens: first.job.usage.output_tokens },
      interrupted: { calls: 0, input_tokens: 0 },
    });

    // A changed prompt is a different call; so is a changed temperature.
    await runMap(key, { ...body, prompt_template: `Again: ${String(body.prompt_template)}` });
    await runMap(key, { ...body, temperature: 0.5 });
    expect((await fakeStats(tag)).requests).toBe(9);
  });

  it("is never shared across tenants, and is used only by jobs that ask for it", async () => {
    const one = await newTenant(base());
    const two = await newTenant(base());
    const tag = uniqueTag("tenants");
    const body = scriptedMap(tag, ["ok", "ok"], CACHE);
    await runMap(one.key, body);
    const other = await runMap(two.key, body);
    expect(other.results.map((r) => r.cached)).toEqual([undefined, undefined]);
    expect((await fakeStats(tag)).requests).toBe(4);
    const plain = await runMap(one.key, scriptedMap(tag, ["ok", "ok"]));
    expect(plain.job.usage.cached.calls).toBe(0);
    expect((await fakeStats(tag)).requests).toBe(6);
  });

  it("keeps answers for ttl_secs only: an older answer is called again and replaced", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("ttl");
    await runMap(key, scriptedMap(tag, ["ok"], { cache: { ttl_secs: 1 } }));
    await new Promise((r) => setTimeout(r, 1_100));
    const late = await runMap(key, scriptedMap(tag, ["ok"], { cache: { ttl_secs: 1 } }));
    expect(late.results[0].cached).toBeUndefined();
    const longer = await runMap(key, scriptedMap(tag, ["ok"], { cache: { ttl_secs: 60 } })); // the replaced answer is fresh
    expect(longer.results[0].cached).toBe(true);
    expect((await fakeStats(tag)).requests).toBe(2);
  });

  it("keeps the validated output an item reached on a retry, and never an invalid one", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("retry");
    const first = await runMap(key, scriptedMap(tag, ["bad,ok", "bad"], { ...CACHE, max_retries: 1 }));
    expect(first.results.map((r) => [r.success, r.attempts])).toEqual([
      [true, 2],
      [false, 2],
    ]);
    const second = await runMap(key, scriptedMap(tag, ["bad,ok", "bad"], { ...CACHE, max_retries: 0 }));
    expect(second.results.map((r) => [r.success, r.cached ?? false])).toEqual([
      [true, true],
      [false, false],
    ]);
    expect(second.results[0].output).toEqual(first.results[0].output);
    expect((await fakeStats(tag)).requests).toBe(5); // 2 + 2, then only the invalid item again
  });

  it("dry runs say how many calls the cache already answers, and count them at no tokens", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dry");
    await runMap(key, scriptedMap(tag, ["ok", "ok"], { ...CACHE, max_tokens: 50 }));
    const body = scriptedMap(tag, ["ok", "ok", "ok"], { ...CACHE, max_tokens: 50 });
    const res = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body });
    expect(res.status).toBe(200);
    expect(res.body.estimate).toMatchObject({ calls: 3, cached_calls: 2, output_tokens_max: 50 });
    expect(res.body.estimate.method).toContain("response cache");
    const without = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body: scriptedMap(tag, ["ok", "ok", "ok"], { max_tokens: 50 }) });
    expect(without.body.estimate).toMatchObject({ calls: 3, cached_calls: 0, output_tokens_max: 150 });
    // A budget that only the uncached call fits is accepted.
    const budgeted = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, token_budget: { total: res.body.estimate.total_tokens } } });
    expect(budgeted.status).toBe(202);
    await waitForJob(base(), key, budgeted.body.job_id);
  });

  it("a recovered map-reduce pays only for what changed: unchanged reducer calls come from the cache", async () => {
    const { key } = await newTenant(base());
    const [tm, tr] = [uniqueTag("mr-map"), uniqueTag("mr-red")];
    const extractions = (category: string, name: string) => encodeURIComponent(JSON.stringify([{ category, name }]));
    const body = {
      inputs: [
        `doc 0 <<fake tag=${tm} id=m0 steps=json:${extractions("a", "a1")}>>`,
        `doc 1 <<fake tag=${tm} id=m1 steps=401,json:${extractions("b", "b1")}>>`,
      ],
      model: "openai/gpt-6-luna",
      mapper: { prompt_template: "{{ item }}" },
      docs_per_mapper: 1,
      reducer: { prompt_template: `K={{ key }} {% for x in items %}{{ x.name }},{% endfor %} <<fake tag=${tr}>>`, output_schema: ECHO_SCHEMA },
      reduction_strategy: "category",
      map_failures: "continue",
      ...CACHE,
    };
    const res = await call(base(), "POST", "/v1/map-reduce", { token: key, body });
    const first = await waitForJob(base(), key, res.body.job_id);
    expect(first).toMatchObject({ status: "completed" });
    expect((await fakeStats(tr)).requests).toBe(1); // group a

    const recover = await call(base(), "POST", `/v1/jobs/${first.id}/recover`, { token: key });
    expect(recover.status).toBe(202);
    const second = await waitForJob(base(), key, first.id);
    expect(second.status).toBe("completed");
    const reduce = await allResults(base(), key, first.id, "&stage=reduce");
    expect(reduce.map((r) => [r.key, r.output.echo, r.cached ?? false])).toEqual([
      ["a", "K=a a1,", true],
      ["b", "K=b b1,", false],
    ]);
    expect((await fakeStats(tr)).requests).toBe(2); // only group b was called again
    expect((await fakeStats(tm)).requests).toBe(3);
    expect(second.usage.cached.calls).toBe(1);
    // A dry run of the same job knows both mapper calls are answered (their prompts are known before it runs).
    const dry = await call(base(), "POST", "/v1/map-reduce?dry_run=true", { token: key, body });
    expect(dry.body.estimate.by_stage.map).toMatchObject({ calls: 2, input_tokens: 0 });
    expect(dry.body.estimate.cached_calls).toBeGreaterThanOrEqual(1);
  });

  it("serves a pipeline's steps and batch elements, and a reduce's fold, from the cache on a second run", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("pipe");
    const pipeline = {
      inputs: { topic: "tides", questions: ["q1", "q2", "q3"] },
      model: "openai/gpt-6-luna",
      steps: [
        { id: "outline", type: "llm", prompt_template: `Outline {{ topic }} <<fake tag=${tag}>>`, output_schema: ECHO_SCHEMA },
        {
          id: "answers",
          type: "llm",
          prompt_template: `For {{ outline.echo }}: {{ question }} <<fake tag=${tag}>>`,
          batch: { items: "${questions}", as: "question" },
        },
      ],
      ...CACHE,
    };
    const fold = {
      inputs: ["a", "b", "c"],
      model: "openai/gpt-6-luna",
      initial_value: "",
      reduction_task: { prompt_template: `{{ accumulator }}+{{ current_result }} <<fake tag=${tag}>>` },
      ...CACHE,
    };
    const run = async (path: string, body: unknown) => waitForJob(base(), key, (await call(base(), "POST", path, { token: key, body })).body.job_id);
    const firstPipe = await run("/v1/pipelines", pipeline);
    const firstFold = await run("/v1/reduce", fold);
    expect([firstPipe.status, firstFold.status]).toEqual(["completed", "completed"]);
    expect((await fakeStats(tag)).requests).toBe(4 + 3);
    // A dry run counts the calls whose prompts are known before the run: here the outline (the answers read its output);
    // a first step batched over the inputs has every element's prompt known.
    const dryPipe = await call(base(), "POST", "/v1/pipelines?dry_run=true", { token: key, body: pipeline });
    expect(dryPipe.body.estimate).toMatchObject({ calls: 4, cached_calls: 1 });
    const firstOnly = {
      ...pipeline,
      steps: [{ id: "each", type: "llm", prompt_template: `Q {{ question }} <<fake tag=${tag}>>`, batch: { items: "${questions}", as: "question" } }],
    };
    await run("/v1/pipelines", firstOnly);
    const dryBatch = await call(base(), "POST", "/v1/pipelines?dry_run=true", { token: key, body: firstOnly });
    expect(dryBatch.body.estimate).toMatchObject({ calls: 3, cached_calls: 3, input_tokens: 0 });
    expect((await fakeStats(tag)).requests).toBe(4 + 3 + 3);
    const [pipe, again] = [await run("/v1/pipelines", pipeline), await run("/v1/reduce", fold)];
    expect(pipe).toMatchObject({ status: "completed", output: firstPipe.output, usage: { input_tokens: 0, cached: { calls: 4 } } });
    expect(again).toMatchObject({ status: "completed", output: firstFold.output, usage: { input_tokens: 0, cached: { calls: 3 } } });
    expect((await fakeStats(tag)).requests).toBe(10);
  });

  it("refuses bad settings, and on agentic-map, with 400", async () => {
    const { key } = await newTenant(base());
    for (const cache of [{ ttl_secs: 0 }, { ttl_secs: 30 * 86_400 + 1 }, { ttl_secs: 1.5 }, { ttl: 5 }, 5]) {
      const res = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("bad"), ["ok"], { cache }) });
      expect(res.status, JSON.stringify(cache)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    const agentic = await call(base(), "POST", "/v1/agentic-map", {
      token: key,
      body: { inputs: ["x"], agent_prompt_template: `Do {{ item }} ${fake(uniqueTag("ag"), 0)}`, model: "openai/gpt-6-luna", ...CACHE },
    });
    expect(agentic.status).toBe(400);
  });
});
