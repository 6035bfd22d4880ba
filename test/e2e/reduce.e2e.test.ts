/**
 * POST /v1/reduce over HTTP, through the real OpenAI SDK against the fake model: reductions run
 * strictly in input order whatever order the inner tasks finish in, inner tasks run ahead in
 * parallel, named inputs keep their key order, and a failed task fails the job with its context
 * and the partial accumulator, from which `recover` goes on without repeating finished calls.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, ECHO_SCHEMA, newTenant, openEvents, readSse, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const MODEL = "openai/gpt-6-luna";

/** A fold whose accumulator's `echo` is "+<inner 0>+<inner 1>…": the order it was built in. */
function fold(innerTag: string, reductionTag: string, inputs: unknown, overrides: Record<string, unknown> = {}) {
  return {
    inputs,
    initial_value: "",
    inner_task: { prompt_template: `{{ item.v }} <<fake tag=${innerTag} id=i{{ index }} ms={{ item.ms }}>>`, output_schema: ECHO_SCHEMA },
    reduction_task: {
      prompt_template: `{{ accumulator.echo if accumulator else '' }}+{{ current_result.echo }} <<fake tag=${reductionTag} id=r{{ index }} steps={{ original_input.steps or 'ok' }} ms=20>>`,
      output_schema: ECHO_SCHEMA,
    },
    model: MODEL,
    concurrency: 8,
    ...overrides,
  };
}

describe("POST /v1/reduce", () => {
  it("folds strictly in input order while inner tasks finish in scrambled order, running ahead in parallel", async () => {
    const { key } = await newTenant(base());
    const [ti, tr] = [uniqueTag("inner"), uniqueTag("red")];
    const latencies = [400, 30, 300, 10, 250, 120, 5, 200];
    const inputs = latencies.map((ms, i) => ({ v: `a${i}`, ms }));
    const created = await call(base(), "POST", "/v1/reduce", { token: key, body: fold(ti, tr, inputs) });
    expect(created.status).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ type: "reduce", status: "completed", error: null, stage: null, total: 16, succeeded: 16 });
    expect(job.output.echo).toBe("+a0+a1+a2+a3+a4+a5+a6+a7");
    expect(job.stages.map((s: any) => [s.name, s.status, s.total, s.succeeded])).toEqual([
      ["inner", "completed", 8, 8],
      ["reduction", "completed", 8, 8],
    ]);
    expect((await fakeStats(ti)).max_in_flight).toBeGreaterThan(1); // inner tasks ran ahead together
    expect((await fakeStats(tr)).max_in_flight).toBe(1); // reductions one at a time

    const events = await readSse(await openEvents(base(), key, job.id));
    const reductions = events.filter((e) => e.event === "TASK_COMPLETED" && e.data.stage === "reduction").map((e) => e.data.index);
    expect(reductions).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const inner = events.filter((e) => e.event === "TASK_COMPLETED" && e.data.stage === "inner").map((e) => e.data.index);
    expect(inner).not.toEqual([0, 1, 2, 3, 4, 5, 6, 7]); // they did finish out of order
    expect(events[0]).toMatchObject({ event: "MAP_STARTED", data: { type: "reduce", total: 16 } });
    expect(
      events
        .filter((e) => e.event === "STAGE_STARTED")
        .map((e) => e.data.stage)
        .sort(),
    ).toEqual(["inner", "reduction"]);
    expect(events.filter((e) => e.event === "STAGE_COMPLETED")).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ event: "MAP_COMPLETED", data: { status: "completed", output: { echo: "+a0+a1+a2+a3+a4+a5+a6+a7" }, error: null } });

    const steps = await allResults(base(), key, job.id, "&stage=reduction");
    expect(steps.map((r) => [r.index, r.name, r.accumulator.echo])).toEqual(
      inputs.map((_, i) => [
        i,
        String(i),
        inputs
          .slice(0, i + 1)
          .map((x) => `+${x.v}`)
          .join(""),
      ]),
    );
    const innerResults = await allResults(base(), key, job.id); // the default stage: inner
    expect(innerResults.map((r) => [r.stage, r.index, r.output.echo])).toEqual(inputs.map((x, i) => ["inner", i, x.v]));
  });

  it("takes named inputs in key order, and without an inner task folds the inputs themselves", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("named");
    const body = {
      inputs: { zeta: "first", alpha: "second", mid: "third" },
      reduction_task: {
        prompt_template: `{{ accumulator.echo if accumulator else 'start' }}+{{ name }}={{ current_result }}/{{ original_input }} <<fake tag=${tag} id={{ index }}>>`,
        output_schema: ECHO_SCHEMA,
      },
      model: MODEL,
    };
    const created = await call(base(), "POST", "/v1/reduce?wait=true", { token: key, body });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: "completed", total: 3 });
    expect(created.body.output.echo).toBe("start+zeta=first/first+alpha=second/second+mid=third/third");
    expect(created.body.stages[0]).toMatchObject({ name: "inner", status: "skipped", total: 0 });
    const results = await allResults(base(), key, created.body.id); // no inner: the default stage is reduction
    expect(results.map((r) => r.name)).toEqual(["zeta", "alpha", "mid"]);
  });

  it("fails with the failure context and the partial accumulator, then recover goes on from the failed input", async () => {
    const { key } = await newTenant(base());
    const [ti, tr] = [uniqueTag("inner"), uniqueTag("red")];
    const inputs = [
      { v: "a0", ms: 5 },
      { v: "a1", ms: 5 },
      { v: "a2", ms: 5, steps: "400,ok" },
      { v: "a3", ms: 5 },
    ];
    const created = await call(base(), "POST", "/v1/reduce", { token: key, body: fold(ti, tr, inputs) });
    const failed = await waitForJob(base(), key, created.body.job_id);
    expect(failed).toMatchObject({ status: "failed", error: { code: "task_failed", stage: "reduction", index: 2, step: "2" } });
    expect(failed.error.message).toMatch(/400/);
    expect(failed.output.echo).toBe("+a0+a1"); // the last accumulator reached
    expect(failed.stages.find((s: any) => s.name === "reduction")).toMatchObject({ status: "failed", succeeded: 2, failed: 1 });
    const innerCalls = (await fakeStats(ti)).requests;

    const recovered = await call(base(), "POST", `/v1/jobs/${failed.id}/recover`, { token: key });
    expect(recovered.status).toBe(202);
    expect(recovered.body).toMatchObject({ job_id: failed.id, status: "running" });
    expect(recovered.body.recovering).toBeGreaterThanOrEqual(2); // reduction 2 (failed) and 3 (never ran)
    const done = await waitForJob(base(), key, failed.id);
    expect(done).toMatchObject({ status: "completed", error: null });
    expect(done.output.echo).toBe("+a0+a1+a2+a3");
    // No finished call ran again: inner tasks once each; reductions 0, 1 once, 2 twice (400 then ok), 3 once.
    expect((await fakeStats(ti)).requests).toBe(innerCalls);
    expect((await fakeStats(tr)).requests).toBe(5);
    const events = await readSse(await openEvents(base(), key, failed.id));
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const names = events.map((e) => e.event);
    expect(names.filter((n) => n === "MAP_COMPLETED")).toHaveLength(2);
    expect(names.indexOf("JOB_RECOVERING")).toBeGreaterThan(names.indexOf("MAP_COMPLETED"));
  });

  it("refuses a template without its required variables (400 template_missing_variable, naming it), storing nothing", async () => {
    const { key } = await newTenant(base());
    const body = { inputs: ["x"], reduction_task: { prompt_template: "{{ accumulator }}" }, model: MODEL };
    const res = await call(base(), "POST", "/v1/reduce", { token: key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("template_missing_variable");
    expect(res.body.error.message).toContain("current_result");
    const inner = await call(base(), "POST", "/v1/reduce", {
      token: key,
      body: { ...body, reduction_task: { prompt_template: "{{ accumulator }} {{ current_result }}" }, inner_task: { prompt_template: "{{ name }}" } },
    });
    expect(inner.status).toBe(400);
    expect(inner.body.error).toMatchObject({ code: "template_missing_variable", details: [{ path: "inner_task.prompt_template" }] });
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });

  it("refuses empty or oversized inputs and unknown fields", async () => {
    const { key } = await newTenant(base());
    const task = { prompt_template: "{{ accumulator }} {{ current_result }}" };
    for (const inputs of [[], {}, Array.from({ length: 10_001 }, () => 0)]) {
      const res = await call(base(), "POST", "/v1/reduce", { token: key, body: { inputs, reduction_task: task, model: MODEL } });
      expect(res.status).toBe(400);
    }
    const extra = await call(base(), "POST", "/v1/reduce", { token: key, body: { inputs: [1], reduction_task: { ...task, nope: 1 }, model: MODEL } });
    expect(extra.status).toBe(400);
    const long = `{{ accumulator }} {{ current_result }}${"x".repeat(100_001)}`;
    const big = await call(base(), "POST", "/v1/reduce", { token: key, body: { inputs: [1], reduction_task: { prompt_template: long }, model: MODEL } });
    expect(big).toMatchObject({ status: 413, body: { error: { code: "payload_too_large", details: [{ path: "reduction_task.prompt_template" }] } } });
    const initial = await call(base(), "POST", "/v1/reduce", {
      token: key,
      body: { inputs: [1], initial_value: "y".repeat(300_000), reduction_task: task, model: MODEL },
    });
    expect(initial).toMatchObject({ status: 413, body: { error: { details: [{ path: "initial_value" }] } } });
  });
});
