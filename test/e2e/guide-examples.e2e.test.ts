/**
^ * The guide's examples (docs/operators.md: reduce, embed, join, map-reduce, pipelines in JSON and XML, a filter's cascade (fixed and with a target), resolve, recover, resume, dry run, cache), extracted and sent as written to
 * the test server (whose `openai/…` models are the fake model server).
 */
import { describe, expect, it } from "vitest";
import { call, newTenant, waitForJob, waitForStatus } from "./harness/api.ts";
import { base, scriptedMap, uniqueTag } from "./harness/context.ts";
import { example, exampleText, guideText } from "./harness/readme.ts";

describe("the guide's examples (docs/operators.md)", () => {
  it("reduce: folds the named inputs and answers with the ended job", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/reduce?wait=true", { token: key, body: example("POST /v1/reduce?wait=true") });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: "reduce", status: "completed", total: 6, succeeded: 6 });
    expect(res.body.output).toHaveProperty("facts");
  });

  it("embed: each input's vector, as long as the example asks", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/embed?wait=true", { token: key, body: example("POST /v1/embed") });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect(res.body).toMatchObject({ type: "embed", status: "completed", succeeded: 2 });
    const results = await call(base(), "GET", `/v1/jobs/${res.body.id}/results`, { token: key });
    expect(results.body.results.map((r: { dimensions: number }) => r.dimensions)).toEqual([256, 256]);
  });

  it("join: the example runs offline and answers its pairs", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/join?wait=true", { token: key, body: example("POST /v1/join") });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect(res.body).toMatchObject({ type: "join", status: "completed", output: { failed: 0, comparisons: 6 } });
    expect(Array.isArray(res.body.output.pairs)).toBe(true);
  });

  it("map-reduce: runs the offline example to its synthesis, with an audit", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/map-reduce?wait=true", { token: key, body: example("POST /v1/map-reduce?wait=true") });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: "map_reduce", status: "completed" });
    expect(JSON.parse(res.body.output).echo).toMatch(/^Write the report from: /); // the fake answers text as {"echo"} JSON
    expect(res.body.stages.map((s: any) => s.status)).toEqual(["completed", "completed", "completed", "completed"]);
    const audit = await call(base(), "GET", `/v1/jobs/${res.body.id}/audit`, { token: key });
    expect(audit.body).toMatchObject({ documents: 4, left_out: [] });
    expect(audit.body.nodes.at(-1)).toMatchObject({ stage: "synthesis", sources: [0, 1, 2, 3] });
  });

  it("filter with a cascade: offline the cheaper model is sure of both items (the fake answers confidence 1), so the job's model is never called", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/filter?wait=true", { token: key, body: example("POST /v1/filter with a cascade") });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      type: "filter",
      status: "completed",
      output: { kept: [0, 1], dropped: 0, failed: 0, decided_by: { cascade: 2, model: 0 } },
    });
    expect(res.body.stages.map((s: any) => [s.name, s.total, s.succeeded])).toEqual([
      ["cascade", 2, 2],
      ["items", 2, 2],
    ]);
  });

  it("filter with a cascade target: offline the sample of 200 holds both items, so the job's model answers both and the cascade decides nothing", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/filter?wait=true", { token: key, body: example("POST /v1/filter with a cascade target") });
    expect(res.status).toBe(200);
    expect(res.body.output).toMatchObject({
      decided_by: { cascade: 0, model: 0, sample: 2 },
      cascade: { sample_size: 2, oracle_calls: 2, seed: 7, met: false },
    });
    expect(res.body.stages.map((s: any) => [s.name, s.total])).toEqual([
      ["cascade", 2],
      ["sample", 2],
      ["items", 2],
    ]);
  });

  it("evaluations: the example runs as written over the cascade example's job (its id put in)", async () => {
    const { key } = await newTenant(base());
    const source = await call(base(), "POST", "/v1/filter?wait=true", { token: key, body: example("POST /v1/filter with a cascade") });
    const body = { ...example("POST /v1/evaluations"), job_id: source.body.id };
    const res = await call(base(), "POST", "/v1/evaluations?wait=true", { token: key, body });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      type: "evaluation",
      status: "completed",
      evaluates: source.body.id,
      output: { sample_size: 2, seed: 1, criteria: { faithful: { judged: 2 } } },
    });
  });

  it("resolve: the trigram blocking compares the two Acme records only; their cluster gets one resolution, Globex is its own record", async () => {
    const { key } = await newTenant(base());
    const created = await call(base(), "POST", "/v1/resolve", { token: key, body: example("POST /v1/resolve") });
    expect(created.status).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job.output.clusters).toEqual([[0, 1], [2]]);
    expect(job.output.resolved[1]).toEqual({ name: "Globex" });
    expect(JSON.parse(job.output.resolved[0]).echo).toMatch(/^One record for: /);
    expect(job.stages.map((s: any) => [s.name, s.total])).toEqual([
      ["records", 3],
      ["compare", 1],
      ["resolve", 1],
    ]);
  });

  it("pipelines: the JSON example runs its three steps, the batch over the questions included", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/pipelines?wait=true", { token: key, body: example("POST /v1/pipelines?wait=true") });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: "pipeline", status: "completed", error: null });
    expect(res.body.stages.map((s: any) => [s.name, s.total])).toEqual([
      ["outline", 1],
      ["answers", 3],
      ["guide", 3],
      ["steps", 3],
    ]);
    expect(JSON.parse(res.body.output).echo).toMatch(/^Guide so far: /);
  });

  it("pipelines: the operator steps' example filters, ranks the kept papers and writes on the best", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/pipelines?wait=true", { token: key, body: example("POST /v1/pipelines with operator steps") });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: "pipeline", status: "completed", error: null });
    expect(res.body.stages.map((s: any) => [s.name, s.total])).toEqual([
      ["screen/items", 3],
      ["best/score", 3],
      ["best/compare", 3],
      ["blurb", 1],
      ["steps", 3],
    ]);
    expect(JSON.parse(res.body.output).echo).toMatch(/^One line on Attention is all you need/); // offline every paper is kept and scored alike: the tie is broken by comparisons
  });

  it("pipelines: the XML example runs as written", async () => {
    const { key } = await newTenant(base());
    const xml = exampleText("POST /v1/pipelines (XML)", "xml");
    const res = await call(base(), "POST", "/v1/pipelines?wait=true", { token: key, rawBody: xml, headers: { "content-type": "application/xml" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: "pipeline", status: "completed" });
    expect(JSON.parse(res.body.output).echo).toMatch(/^Apply the configuration to the loaded data\nconfig: \{"mode": "strict"\}\nloaded: /);
  });

  it("subtasks: the agent delegates, and the session tree is as the README shows it", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/agentic-map?wait=true", { token: key, body: example("POST /v1/agentic-map (subtasks)") });
    expect(res.status).toBe(200);
    expect(res.body.successes[0]).toMatchObject({ output_text: "Yes - Acme Pro is 10 USD", turns: 2 });
    const root = (await call(base(), "GET", `/v1/sessions/${res.body.successes[0].session_id}`, { token: key })).body;
    expect(root).toMatchObject({ parent_session_id: null, depth: 0, status: "completed" });
    expect(root.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(root.messages[2]).toMatchObject({ name: "spawn_subtask", content: "Acme Pro costs 10 USD a month" });
    const child = (await call(base(), "GET", `/v1/sessions/${root.children[0]}`, { token: key })).body;
    expect(child).toMatchObject({ parent_session_id: root.session_id, depth: 1, children: [] });
  });

  it("batch mode: the example runs as one provider batch at half the price", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/map?wait=true", { token: key, body: example("POST /v1/map in batch mode") });
    expect(res.status).toBe(200);
    const job = (await call(base(), "GET", `/v1/jobs/${res.body.job_id}`, { token: key })).body;
    expect(job).toMatchObject({ status: "completed", execution: { mode: "batch" }, batches: [{ requests: 2, status: "ended" }] });
    expect(res.body.successes.map((r: { cost_usd: number }) => r.cost_usd > 0)).toEqual([true, true]);
  });

  it("dry run: the estimate, as the README shows it", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body: example("POST /v1/map?dry_run=true") });
    expect(res.status).toBe(200);
    const readme = guideText();
    const shown = readme.slice(readme.indexOf("<!-- example: POST /v1/map?dry_run=true -->"));
    const answer = /```json\n(\{"estimate"[\s\S]*?)```/.exec(shown)?.[1] ?? "{}";
    expect(res.body).toEqual(JSON.parse(answer));
  });

  it("cache: sent twice as written, the second job is answered from the cache", async () => {
    const { key } = await newTenant(base());
    const body = example("POST /v1/map with cache");
    const run = async () => waitForJob(base(), key, (await call(base(), "POST", "/v1/map", { token: key, body })).body.job_id);
    expect(await run()).toMatchObject({ status: "completed", usage: { cached: { calls: 0 } } });
    expect(await run()).toMatchObject({ status: "completed", usage: { input_tokens: 0, output_tokens: 0, cached: { calls: 2 } } });
  });

  it("recover: the body re-runs a failed item with its overrides", async () => {
    const { key } = await newTenant(base());
    const created = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("readme"), ["ok", "500,ok"], { max_retries: 0 }) });
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job.failed).toBe(1);
    const res = await call(base(), "POST", `/v1/jobs/${job.id}/recover`, { token: key, body: example("recover") });
    expect(res).toMatchObject({ status: 202, body: { recovering: 1 } });
    await waitForJob(base(), key, job.id);
  });

  it("resume: the body resumes a paused job", async () => {
    const { key } = await newTenant(base());
    const body = scriptedMap(uniqueTag("readme"), ["bad,ok", "bad,ok", "bad,ok"], { max_tokens: 20, concurrency: 1, max_retries: 1 });
    const total = (await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body })).body.estimate.total_tokens;
    const created = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, token_budget: { total } } });
    await waitForStatus(base(), key, created.body.job_id, ["paused"], 30_000);
    const res = await call(base(), "POST", `/v1/jobs/${created.body.job_id}/resume`, { token: key, body: example("resume") });
    expect(res.status).toBe(202);
    expect((await waitForJob(base(), key, created.body.job_id)).status).toBe("completed");
  });
});
