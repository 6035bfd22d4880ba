/**
 * POST /v1/pipelines over HTTP when a pipeline stops part-way: a token budget that pauses it and a
 * resume that repeats no call, fail_fast with its failure context and partial result, and recover
 * from the failed step or of a completed pipeline's failed elements.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, ECHO_SCHEMA, newTenant, waitForJob, waitForStatus } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { FILES_SCHEMA, json, MODEL, run } from "./harness/pipelines.ts";

describe("POST /v1/pipelines, stopped part-way", () => {
  it("a token budget over the whole pipeline pauses it where the real spend outruns it, and a resume goes on without repeating a call", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("pbudget");
    const body = {
      model: MODEL,
      max_tokens: 20,
      steps: [
        {
          id: "list",
          type: "llm",
          prompt_template: `list <<fake tag=${t} id=list steps=${json({ files: Array.from({ length: 20 }, (_, i) => `f${i}`) })}>>`,
          output_schema: FILES_SCHEMA,
        },
        {
          id: "each",
          type: "llm",
          batch: { items: "${list.files}", max_concurrent: 1 },
          prompt_template: `{{ item }} <<fake tag=${t} id={{ item }}>>`,
          output_schema: ECHO_SCHEMA,
        },
        { id: "end", type: "llm", prompt_template: `{{ each.count }} <<fake tag=${t} id=end>>`, output_schema: ECHO_SCHEMA },
      ],
    };
    const dry = await call(base(), "POST", "/v1/pipelines?dry_run=true", { token: key, body });
    expect(dry.body.estimate).toMatchObject({ calls: 3 }); // the batch over an earlier output counted once
    expect(dry.body.estimate.method).toContain("earlier outputs");
    const total = dry.body.estimate.total_tokens;
    const created = await call(base(), "POST", "/v1/pipelines", { token: key, body: { ...body, token_budget: { total } } });
    const paused = await waitForStatus(base(), key, created.body.job_id, ["paused"], 30_000);
    // The twenty elements were counted as one call: the real spend outruns the budget within them.
    expect(paused).toMatchObject({ pause_reason: "budget_exhausted", stage: "each" });
    expect((await fakeStats(t)).requests).toBeLessThan(22);
    const resumed = await call(base(), "POST", `/v1/jobs/${paused.id}/resume`, { token: key, body: { token_budget: { total: total * 10 } } });
    expect(resumed.status).toBe(202);
    const done = await waitForJob(base(), key, paused.id);
    expect(done).toMatchObject({ status: "completed", output: { echo: "20" } });
    expect((await fakeStats(t)).requests).toBe(22); // list, twenty elements, end: none twice
  });

  it("fail_fast: the step fails with its path and element, the partial result is kept, and recover goes on without repeating finished elements", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("ff");
    const body = {
      inputs: { list: ["a", "b", "c"] },
      max_retries: 0,
      steps: [
        { id: "first", type: "llm", prompt_template: `start <<fake tag=${t} id=first>>`, output_schema: ECHO_SCHEMA },
        {
          id: "outer",
          type: "sequential",
          steps: [
            {
              id: "each",
              type: "llm",
              batch: { items: "${list}", max_concurrent: 1 },
              prompt_template: `{{ item }} <<fake tag=${t} id={{ item }} steps={{ '401,ok' if item == 'b' else 'ok' }}>>`,
              output_schema: ECHO_SCHEMA,
            },
          ],
        },
        {
          id: "last",
          type: "llm",
          prompt_template: `{{ outer.results | map(attribute='echo') | join(',') }} <<fake tag=${t} id=last>>`,
          output_schema: ECHO_SCHEMA,
        },
      ],
    };
    const failed = await run(key, body);
    expect(failed).toMatchObject({ status: "failed", error: { code: "step_failed", step: "outer.each", index: 1 } });
    expect(failed.output).toEqual({ failed_step: "outer.each", accumulated: [{ step: "first", notes: JSON.stringify({ echo: "start", length: 5 }) }] });
    expect((await fakeStats(t)).requests).toBe(3); // first, a, b — c never started
    const listed = await allResults(base(), key, failed.id, "&stage=steps");
    expect(listed.map((s) => [s.index, s.step, s.status, s.output === null])).toEqual([
      [0, "first", "completed", false],
      [1, "outer.each", "failed", true],
      [2, "last", "pending", true],
    ]);
    expect(listed[1].usage.input_tokens).toBeGreaterThan(0); // a and b ran
    expect((await allResults(base(), key, failed.id, "&stage=outer.each")).map((e) => [e.index, e.success])).toEqual([
      [0, true],
      [1, false],
    ]);
    const recovered = await call(base(), "POST", `/v1/jobs/${failed.id}/recover`, { token: key, body: {} });
    expect(recovered.status).toBe(202);
    const done = await waitForJob(base(), key, failed.id);
    expect(done).toMatchObject({ status: "completed", error: null });
    expect(done.output.echo).toBe("a,b,c");
    expect((await fakeStats(t)).requests).toBe(6); // b again, c, last: nothing finished ran twice
  });

  it("recover of a completed pipeline re-runs a continue batch's failed elements, then every later step; of a failed one, goes on from the failed step only", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("redo");
    const steps = (last: string) => [
      { id: "first", type: "llm", prompt_template: `first <<fake tag=${t} id=first-${last}>>`, output_schema: ECHO_SCHEMA },
      {
        id: "each",
        type: "llm",
        batch: { items: "${list}", error_handling: "continue" },
        prompt_template: `{{ item }} <<fake tag=${t} id={{ item }}-${last} steps={{ '401,ok' if item == 'b' else 'ok' }}>>`,
        output_schema: ECHO_SCHEMA,
      },
      {
        id: "last",
        type: "llm",
        prompt_template: `{% for r in each.results %}{{ r.echo if r else '' }}{{ '' if loop.last else ',' }}{% endfor %} <<fake tag=${t} id=last-${last} steps=${last}>>`,
        output_schema: ECHO_SCHEMA,
      },
    ];
    // Completed with one failed element: recover re-runs it, then `last` (planned anew), never `first`.
    const done = await run(key, { inputs: { list: ["a", "b", "c"] }, max_retries: 0, steps: steps("ok") });
    expect(done).toMatchObject({ status: "completed", output: { echo: "a,,c" } });
    // b, and the markers of `each` and `last` (the `last` stage is dropped and planned anew)
    expect((await call(base(), "POST", `/v1/jobs/${done.id}/recover`, { token: key, body: {} })).body.recovering).toBe(1 + 2);
    const redone = await waitForJob(base(), key, done.id);
    expect(redone).toMatchObject({ status: "completed", output: { echo: "a,b,c" }, failed: 0 });
    const markers = await allResults(base(), key, done.id, "&stage=steps");
    expect(markers.map((m) => m.step)).toEqual(["first", "each", "last"]);
    expect(markers[1].output.errors).toBeNull();
    expect(await allResults(base(), key, done.id, "&stage=last")).toHaveLength(1);
    const calls = await fakeStats(t);
    expect(calls.requests).toBe(1 + 3 + 1 + 1 + 1); // first once; a, b, c; last; then b and last again

    // Failed at `last` (after the same continue failure): recover re-runs `last` only; b's failure stays.
    const failed = await run(key, { inputs: { list: ["a", "b", "c"] }, max_retries: 0, steps: steps("401,ok") });
    expect(failed).toMatchObject({ status: "failed", error: { code: "step_failed", step: "last" } });
    const before = (await fakeStats(t)).requests;
    expect((await call(base(), "POST", `/v1/jobs/${failed.id}/recover`, { token: key, body: {} })).body.recovering).toBe(1);
    const ended = await waitForJob(base(), key, failed.id);
    expect(ended).toMatchObject({ status: "completed", output: { echo: "a,,c" } });
    expect((await fakeStats(t)).requests).toBe(before + 1);
  });
});
