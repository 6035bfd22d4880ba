/**
 * POST /v1/map-reduce over HTTP against the fake model: mappers return scripted extractions
 * (`json:` steps), reducers and synthesis echo their prompts. Each strategy's call counts and
 * level structure, dedupe, determinism across mapper latencies, map_failures both ways, recover.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, ECHO_SCHEMA, newTenant, waitForJob, waitForStatus } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const MODEL = "openai/gpt-6-luna";

/** Documents whose first of each batch scripts that batch's mapper answer. */
function documents(tag: string, batches: unknown[][], perBatch: number, opts: { ms?: number[]; steps?: (string | null)[] } = {}) {
  return batches.flatMap((extractions, b) => {
    const scripted = opts.steps?.[b] ?? `json:${encodeURIComponent(JSON.stringify(extractions))}`;
    const ms = opts.ms?.[b] !== undefined ? ` ms=${opts.ms[b]}` : "";
    const first = `doc ${b * perBatch} <<fake tag=${tag} id=m${b} steps=${scripted}${ms}>>`;
    return [first, ...Array.from({ length: perBatch - 1 }, (_, i) => `doc ${b * perBatch + i + 1}`)];
  });
}

function body(mapTag: string, redTag: string, docs: string[], over: Record<string, unknown> = {}) {
  return {
    inputs: docs,
    model: MODEL,
    mapper: { prompt_template: "{% for d in items %}{{ d }}\n{% endfor %}" },
    docs_per_mapper: 2,
    reducer: {
      prompt_template: `L{{ level }} K={{ key }} N={{ total_documents }} {% for x in items %}{{ x.name if x.name is defined else x.echo }},{% endfor %} <<fake tag=${redTag}>>`,
      output_schema: ECHO_SCHEMA,
    },
    fan_in: 2,
    ...over,
  };
}

const ex = (category: string, name: string, extra: Record<string, unknown> = {}) => ({ category, name, ...extra });

describe("POST /v1/map-reduce", () => {
  it("hierarchical: fan_in groups per call, levels until one, then synthesis", async () => {
    const { key } = await newTenant(base());
    const [tm, tr, ts] = [uniqueTag("map"), uniqueTag("red"), uniqueTag("syn")];
    const docs = documents(tm, [[ex("a", "a1"), ex("b", "b1")], [ex("c", "c1")], [ex("d", "d1"), ex("a", "a2")]], 2);
    const res = await call(base(), "POST", "/v1/map-reduce", {
      token: key,
      body: body(tm, tr, docs, { synthesis: { prompt_template: `S {{ results.echo }} <<fake tag=${ts}>>`, output_schema: ECHO_SCHEMA } }),
    });
    expect(res.status).toBe(202);
    const job = await waitForJob(base(), key, res.body.job_id);
    expect(job).toMatchObject({ type: "map_reduce", status: "completed", error: null });
    expect(job.stages.map((s: any) => [s.name, s.status, s.total])).toEqual([
      ["map", "completed", 3],
      ["shuffle", "completed", 1],
      ["reduce", "completed", 3],
      ["synthesis", "completed", 1],
    ]);
    expect([(await fakeStats(tm)).requests, (await fakeStats(tr)).requests, (await fakeStats(ts)).requests]).toEqual([3, 3, 1]);
    const reduce = await allResults(base(), key, job.id, "&stage=reduce");
    expect(reduce.map((r) => [r.index, r.level, r.key, r.inputs])).toEqual([
      [0, 0, null, []],
      [1, 0, null, []],
      [2, 1, null, [0, 1]],
    ]);
    expect(reduce[0].output.echo).toBe("L0 K=None N=4 a1,a2,b1,"); // groups a, b (in key order): documents 0, 1, 4, 5
    expect(reduce[0].sources).toEqual([0, 1, 4, 5]);
    expect(reduce[1].output.echo).toBe("L0 K=None N=4 c1,d1,");
    expect(reduce[2].sources).toEqual([0, 1, 2, 3, 4, 5]);
    expect(reduce[2].output.echo).toBe("L1 K=None N=6 L0 K=None N=4 a1,a2,b1,,L0 K=None N=4 c1,d1,,");
    expect(job.output.echo).toBe(`S ${reduce[2].output.echo}`);
    const maps = await allResults(base(), key, job.id); // the default stage: map
    expect(maps.map((m) => [m.documents, m.extractions])).toEqual([
      [[0, 1], 2],
      [[2, 3], 1],
      [[4, 5], 2],
    ]);

    const audit = await call(base(), "GET", `/v1/jobs/${job.id}/audit`, { token: key });
    expect(audit.status).toBe(200);
    expect(audit.body.documents).toBe(6);
    expect(audit.body.left_out).toEqual([]);
    const nodes = new Map(audit.body.nodes.map((n: any) => [n.id, n]));
    expect([...nodes.keys()]).toEqual(["map:0", "map:1", "map:2", "reduce:0", "reduce:1", "reduce:2", "synthesis:0"]);
    expect(nodes.get("reduce:0")).toMatchObject({ level: 0, sources: [0, 1, 4, 5], inputs: ["map:0", "map:2"] });
    expect(nodes.get("reduce:2")).toMatchObject({ level: 1, inputs: ["reduce:0", "reduce:1"] });
    expect(nodes.get("synthesis:0")).toMatchObject({ sources: [0, 1, 2, 3, 4, 5], inputs: ["reduce:2"] });
    expect((nodes.get("map:1") as any).usage.input_tokens).toBeGreaterThan(0);
  });

  it("flat and category: one call over everything, or one per group with [{key, output}] in key order", async () => {
    const { key } = await newTenant(base());
    const batches = [[ex("b", "b1"), ex("a", "a1")], [ex("b", "b2")]];
    const [tm1, tr1] = [uniqueTag("map"), uniqueTag("red")];
    const flat = await call(base(), "POST", "/v1/map-reduce", { token: key, body: body(tm1, tr1, documents(tm1, batches, 2), { reduction_strategy: "flat" }) });
    const flatJob = await waitForJob(base(), key, flat.body.job_id);
    expect(flatJob.output.echo).toBe("L0 K=None N=4 a1,b1,b2,");
    expect((await fakeStats(tr1)).requests).toBe(1);
    const [tm2, tr2] = [uniqueTag("map"), uniqueTag("red")];
    const cat = await call(base(), "POST", "/v1/map-reduce", {
      token: key,
      body: body(tm2, tr2, documents(tm2, batches, 2), { reduction_strategy: "category" }),
    });
    const catJob = await waitForJob(base(), key, cat.body.job_id);
    expect(catJob.output).toEqual([
      { key: "a", output: { echo: "L0 K=a N=2 a1,", length: 14 } },
      { key: "b", output: { echo: "L0 K=b N=4 b1,b2,", length: 17 } },
    ]);
    expect((await fakeStats(tr2)).max_in_flight).toBeGreaterThanOrEqual(1);
    expect((await fakeStats(tr2)).requests).toBe(2);
  });

  it("dedupes across batches (sources united) and gives byte-identical reducer prompts whatever order mappers finish in", async () => {
    const { key } = await newTenant(base());
    const batches = [
      [ex("a", "Acme ", { confidence: 0.2, note: "low" }), ex("a", "zeta")],
      [ex("a", "acme", { confidence: 0.9, note: "high" })],
      [ex("b", "beta"), ex("a", "ACME", { confidence: 0.5, note: "mid" })],
    ];
    const run = async (ms: number[]) => {
      const [tm, tr] = [uniqueTag("map"), uniqueTag("red")];
      const shuffle = { key: "category", dedupe: "exact", dedupe_fields: ["name"], conflict: "highest_confidence" };
      const reducer = { prompt_template: `{{ items | tojson }} <<fake tag=${tr}>>`, output_schema: ECHO_SCHEMA };
      const res = await call(base(), "POST", "/v1/map-reduce", {
        token: key,
        body: body(tm, tr, documents(tm, batches, 2, { ms }), { shuffle, reducer, reduction_strategy: "flat" }),
      });
      const job = await waitForJob(base(), key, res.body.job_id);
      expect(job.status).toBe("completed");
      return (await fakeStats(tr)).prompts.map((p) => p.replace(tr, "TAG"));
    };
    const first = await run([300, 10, 150]);
    const second = await run([10, 300, 50]);
    expect(second).toEqual(first);
    const items = JSON.parse((first[0] as string).replace(" <<fake tag=TAG>>", ""));
    expect(items).toEqual([
      { category: "a", name: "acme", confidence: 0.9, note: "high", sources: [0, 1, 2, 3, 4, 5] },
      { category: "a", name: "zeta", sources: [0, 1] },
      { category: "b", name: "beta", sources: [4, 5] },
    ]);
  });

  it("map_failures fail: the job fails at the end of the map stage; recover re-runs only the failed batch and goes on", async () => {
    const { key } = await newTenant(base());
    const [tm, tr] = [uniqueTag("map"), uniqueTag("red")];
    const good = `json:${encodeURIComponent(JSON.stringify([ex("a", "x")]))}`;
    const docs = documents(tm, [[], [], []], 2, { steps: [good, `400,${good}`, good] });
    const res = await call(base(), "POST", "/v1/map-reduce", { token: key, body: body(tm, tr, docs) });
    const failed = await waitForJob(base(), key, res.body.job_id);
    expect(failed).toMatchObject({ status: "failed", error: { code: "task_failed", stage: "map", index: 1 } });
    expect((await fakeStats(tr)).requests).toBe(0); // the reduce stage never ran
    // The failed batch, and the shuffle that never ran (reduce tasks do not exist before the shuffle).
    expect((await call(base(), "POST", `/v1/jobs/${failed.id}/recover`, { token: key })).body).toMatchObject({ recovering: 2 });
    const done = await waitForJob(base(), key, failed.id);
    expect(done.status).toBe("completed");
    expect((await fakeStats(tm)).requests).toBe(4); // 3 batches, and the failed one once more
    expect((await fakeStats(tr)).requests).toBe(1);
  });

  it("map_failures continue: reduces what succeeded and lists the documents left out", async () => {
    const { key } = await newTenant(base());
    const [tm, tr] = [uniqueTag("map"), uniqueTag("red")];
    const q = `json:${encodeURIComponent(JSON.stringify([ex("a", "q")]))}`;
    const docs = documents(tm, [[ex("a", "x")], [], [ex("b", "y")]], 2, { steps: [null, `400,${q}`, null] });
    const res = await call(base(), "POST", "/v1/map-reduce", {
      token: key,
      body: body(tm, tr, docs, { map_failures: "continue", reduction_strategy: "flat" }),
    });
    const job = await waitForJob(base(), key, res.body.job_id);
    expect(job.status).toBe("completed");
    expect(job.output.echo).toBe("L0 K=None N=4 x,y,");
    const [shuffle] = await allResults(base(), key, job.id, "&stage=shuffle");
    expect(shuffle.output).toMatchObject({ documents: 6, groups: ["a", "b"], extractions: 2, merged: 0, left_out: [2, 3] });
    const audit = await call(base(), "GET", `/v1/jobs/${job.id}/audit`, { token: key });
    expect(audit.body).toMatchObject({ documents: 6, left_out: [2, 3] });
    // Recover re-runs the failed batch (its script now answers), then the shuffle and a reduce planned anew.
    const recover = await call(base(), "POST", `/v1/jobs/${job.id}/recover`, { token: key });
    expect(recover).toMatchObject({ status: 202, body: { recovering: 2 } });
    const again = await waitForJob(base(), key, job.id);
    expect(again).toMatchObject({ status: "completed", failed: 0, output: { echo: "L0 K=None N=6 x,q,y," } });
    const reduce = await allResults(base(), key, job.id, "&stage=reduce");
    expect(reduce.map((r) => r.index)).toEqual([0]);
    expect((await call(base(), "GET", `/v1/jobs/${job.id}/audit`, { token: key })).body.left_out).toEqual([]);
    expect([(await fakeStats(tm)).requests, (await fakeStats(tr)).requests]).toEqual([4, 2]);
    const other = await call(base(), "POST", "/v1/map?wait=true", { token: key, body: { inputs: ["x"], prompt_template: "{{ item }}", model: MODEL } });
    expect((await call(base(), "GET", `/v1/jobs/${other.body.job_id}/audit`, { token: key })).status).toBe(404);
  });

  it("pauses at the reduce stage when its share of the budget cannot fit a call, and resumes without repeating a mapper", async () => {
    const { key } = await newTenant(base());
    const [tm, tr] = [uniqueTag("map"), uniqueTag("red")];
    const docs = documents(tm, [[ex("a", "x")], [ex("b", "y")], [ex("a", "z")]], 2);
    // A small reduce share, and the map stage's unspent share mostly passes to synthesis (its share is larger).
    const request = body(tm, tr, docs, {
      synthesis: { prompt_template: `{{ results.echo }} <<fake tag=${tr}-syn>>`, output_schema: ECHO_SCHEMA, max_tokens: 30 },
      reduction_strategy: "flat",
      mapper: { prompt_template: "{% for d in items %}{{ d }}\n{% endfor %}", max_tokens: 30 },
      reducer: { prompt_template: `{{ items | length }} <<fake tag=${tr}>>`, output_schema: ECHO_SCHEMA, max_tokens: 400 },
    });
    const total = (await call(base(), "POST", "/v1/map-reduce?dry_run=true", { token: key, body: request })).body.estimate.total_tokens;
    const allocation = { map: 0.5, shuffle: 0, reduce: 0.05, synthesis: 0.45 };
    const created = await call(base(), "POST", "/v1/map-reduce", { token: key, body: { ...request, token_budget: { total, allocation } } });
    expect(created.status).toBe(202);
    const paused = await waitForStatus(base(), key, created.body.job_id, ["paused"], 30_000);
    expect(paused).toMatchObject({ pause_reason: "budget_exhausted", stage: "reduce" });
    expect(paused.budget.by_stage.map).toBeGreaterThan(0);
    expect([(await fakeStats(tm)).requests, (await fakeStats(tr)).requests]).toEqual([3, 0]);
    const resumed = await call(base(), "POST", `/v1/jobs/${paused.id}/resume`, { token: key, body: { token_budget: { total: total * 10 } } });
    expect(resumed.status).toBe(202);
    const done = await waitForJob(base(), key, paused.id);
    expect(done).toMatchObject({ status: "completed", output: { echo: "3" } });
    expect([(await fakeStats(tm)).requests, (await fakeStats(tr)).requests]).toEqual([3, 1]);
  });

  it("retries a mapper whose answer is not a list of extractions, with guidance", async () => {
    const { key } = await newTenant(base());
    const [tm, tr] = [uniqueTag("map"), uniqueTag("red")];
    const good = `json:${encodeURIComponent(JSON.stringify({ extractions: [ex("a", "x")] }))}`;
    const docs = documents(tm, [[], []], 2, { steps: [`bad,${good}`, `json:${encodeURIComponent(JSON.stringify(["not an object"]))},${good}`] });
    const res = await call(base(), "POST", "/v1/map-reduce", { token: key, body: body(tm, tr, docs, { reduction_strategy: "flat" }) });
    const job = await waitForJob(base(), key, res.body.job_id);
    expect(job.status).toBe("completed");
    const maps = await allResults(base(), key, job.id);
    expect(maps.map((m) => [m.attempts, m.extractions])).toEqual([
      [2, 1],
      [2, 1],
    ]);
    const prompts = (await fakeStats(tm)).prompts;
    expect(prompts.filter((p) => p.includes("list of extraction objects"))).toHaveLength(2); // the retries carried the problem
  });

  it("refuses bad fields with 400 and stores nothing", async () => {
    const { key } = await newTenant(base());
    const ok = body("t", "t", ["d1", "d2"]);
    const cases: [Record<string, unknown>, string][] = [
      [{ ...ok, docs_per_mapper: 0 }, "invalid_request"],
      [{ ...ok, fan_in: 1 }, "invalid_request"],
      [{ ...ok, reduction_strategy: "tree" }, "invalid_request"],
      [{ ...ok, shuffle: { conflict: "newest" } }, "invalid_request"],
      [{ ...ok, token_budget: { total: 1000, allocation: { map: 0.5, shuffle: 0.05, reduce: 0.25, synthesis: 0.1 } } }, "invalid_request"],
      [{ ...ok, reducer: { prompt_template: "{{ key }}" } }, "template_missing_variable"],
      [{ ...ok, mapper: { prompt_template: "{{ item }}" } }, "template_missing_variable"],
      [{ ...ok, synthesis: { prompt_template: "{{ items }}" } }, "template_missing_variable"],
      [{ ...ok, inputs: [] }, "invalid_request"],
      [{ ...ok, docs_per_mapper: 101 }, "invalid_request"],
      [{ ...ok, max_parallel_mappers: 0 }, "invalid_request"],
      [{ ...ok, max_parallel_mappers: 129 }, "invalid_request"],
      [{ ...ok, fan_in: 51 }, "invalid_request"],
      [{ ...ok, map_failures: "ignore" }, "invalid_request"],
      [{ ...ok, shuffle: { key: "" } }, "invalid_request"],
      [{ ...ok, shuffle: { dedupe: "fuzzy" } }, "invalid_request"],
      [{ ...ok, shuffle: { dedupe_fields: [] } }, "invalid_request"],
      [{ ...ok, concurrency: 4 }, "invalid_request"], // map-reduce's cap is max_parallel_mappers
      [{ ...ok, mapper: { prompt_template: "{{ items }}", output_schema: { type: "nope" } } }, "invalid_output_schema"],
      [{ ...ok, reducer: { prompt_template: "{{ items" } }, "template_syntax"],
      [{ ...ok, model: "nowhere/x" }, "unknown_provider"],
    ];
    for (const [request, code] of cases) {
      const res = await call(base(), "POST", "/v1/map-reduce", { token: key, body: request });
      expect([res.status, res.body.error?.code]).toEqual([400, code]);
    }
    const estimate = await call(base(), "POST", "/v1/map-reduce?dry_run=true", {
      token: key,
      body: {
        ...ok,
        inputs: ["a", "b", "c", "d", "e", "f"],
        synthesis: { prompt_template: "{{ results }}", max_tokens: 10 },
        reducer: { prompt_template: "{{ items }}", max_tokens: 20 },
      },
    });
    // 3 mapper batches; reduce sized as if each batch made a group: fan_in 2 → 2 calls, then 1; synthesis 1.
    expect(estimate.body.estimate).toMatchObject({
      calls: 7,
      by_stage: { map: { calls: 3 }, shuffle: { calls: 0 }, reduce: { calls: 3 }, synthesis: { calls: 1 } },
    });
    expect(estimate.body.estimate.by_stage.reduce.output_tokens_max).toBe(60);
    expect(estimate.body.estimate.method).toMatch(/one group per mapper batch/);
    const single = await call(base(), "POST", "/v1/map-reduce?dry_run=true", {
      token: key,
      body: { ...ok, docs_per_mapper: 1, mapper: { prompt_template: "{{ item }}" } },
    });
    expect(single.status).toBe(200); // with one document per mapper, `item` will do
    expect(single.body.estimate.by_stage.map.calls).toBe(2);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });
});
