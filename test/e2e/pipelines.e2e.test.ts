/**
 * POST /v1/pipelines over HTTP, through the real OpenAI SDK against the fake model: steps in
 * order over a shared store, batch steps (the batch-node spec's criteria), input tasks, context
 * management, failure context with the partial result, recover from the failed step, and every
 * submission check a 400 at its exact path.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, ECHO_SCHEMA, newTenant, openEvents, readSse } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { FILES_SCHEMA, json, MODEL, refused, run } from "./harness/pipelines.ts";

describe("POST /v1/pipelines", () => {
  it("runs the contract's example: a step per stage, a batch over an earlier step's list, a reduce over the batch's results", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("pipe");
    const files = ["a.txt", "b.txt", "c.txt"];
    const job = await run(key, {
      inputs: { raw_data: "RAW", default_config: { mode: "strict" } },
      steps: [
        { id: "load", type: "llm", prompt_template: `Load: {{ data }} <<fake tag=${t} id=load>>`, inputs: { data: "${raw_data}" }, output_schema: ECHO_SCHEMA },
        {
          id: "list_files",
          type: "llm",
          prompt_template: `List the files in {{ load.echo }} <<fake tag=${t} id=list steps=${json({ files })}>>`,
          output_schema: FILES_SCHEMA,
        },
        {
          id: "summarize_files",
          type: "llm",
          output_schema: ECHO_SCHEMA,
          batch: { items: "${list_files.files}", as: "file", error_handling: "continue", max_concurrent: 16 },
          prompt_template: `Summarize {{ file }} <<fake tag=${t} id={{ file }} steps={{ '401' if file == 'b.txt' else 'ok' }}>>`,
        },
        {
          id: "combine",
          type: "reduce",
          inputs_from: "${summarize_files.results}",
          initial_value: "",
          reduction_task: {
            prompt_template: `{{ accumulator.echo if accumulator else '' }}+{{ current_result.echo if current_result else 'none' }} <<fake tag=${t} id=r{{ index }}>>`,
            output_schema: ECHO_SCHEMA,
          },
        },
      ],
    });
    expect(job).toMatchObject({ type: "pipeline", status: "completed", error: null });
    expect(job.output.echo).toBe("+Summarize a.txt+none+Summarize c.txt");
    expect(job.stages.map((s: any) => [s.name, s.status, s.total])).toEqual([
      ["load", "completed", 1],
      ["list_files", "completed", 1],
      ["summarize_files", "completed", 3],
      ["combine", "completed", 3],
      ["steps", "completed", 4],
    ]);
    const steps = await allResults(base(), key, job.id, "&stage=steps");
    expect(steps.map((s) => [s.index, s.step, s.status])).toEqual([
      [0, "load", "completed"],
      [1, "list_files", "completed"],
      [2, "summarize_files", "completed"],
      [3, "combine", "completed"],
    ]);
    expect(steps[0].output).toEqual({ echo: "Load: RAW", length: 9 });
    expect(steps[0].usage.input_tokens).toBeGreaterThan(0);
    const batch = steps[2].output;
    expect(batch).toMatchObject({ count: 3, success_count: 2, error_count: 1 });
    expect(batch.results.map((r: any) => r?.echo ?? null)).toEqual(["Summarize a.txt", null, "Summarize c.txt"]);
    expect(batch.errors).toEqual([{ index: 1, item: "b.txt", error: expect.any(String) }]);
    const events = await readSse(await openEvents(base(), key, job.id));
    expect(events.filter((e) => e.event === "STAGE_STARTED" && e.data.stage !== "steps").map((e) => e.data.stage)).toEqual([
      "load",
      "list_files",
      "summarize_files",
      "combine",
    ]);
    const order = events.filter((e) => e.event === "STAGE_COMPLETED" && e.data.stage !== "steps").map((e) => e.data.stage);
    expect(order).toEqual(["load", "list_files", "summarize_files", "combine"]);
    const elements = await allResults(base(), key, job.id, "&stage=summarize_files");
    expect(elements.map((e) => [e.index, e.success, e.item])).toEqual([
      [0, true, "a.txt"],
      [1, false, "b.txt"],
      [2, true, "c.txt"],
    ]);
  });

  it("empty list: the batch result is empty and the next step runs", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("empty");
    const job = await run(key, {
      inputs: { list: [] },
      steps: [
        { id: "each", type: "llm", batch: { items: "${list}" }, prompt_template: `{{ item }} <<fake tag=${t}>>` },
        { id: "after", type: "llm", prompt_template: `count {{ each.count }} errors {{ each.errors }} <<fake tag=${t}>>`, output_schema: ECHO_SCHEMA },
      ],
    });
    expect(job.status).toBe("completed");
    expect(job.output.echo).toBe("count 0 errors None");
    const steps = await allResults(base(), key, job.id, "&stage=steps");
    expect(steps[0].output).toEqual({ results: [], count: 0, success_count: 0, error_count: 0, errors: null });
  });

  it("single element, complex objects with {{ item.name }}, and a JSON null output as a success", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("objs");
    const job = await run(key, {
      inputs: { people: [{ name: "Ada", age: 36 }], one: ["x"] },
      steps: [
        {
          id: "greet",
          type: "llm",
          batch: { items: "${people}", as: "person" },
          prompt_template: `Hello {{ person.name }} ({{ person.age }}) <<fake tag=${t}>>`,
          output_schema: ECHO_SCHEMA,
        },
        {
          id: "nothing",
          type: "llm",
          batch: { items: "${one}" },
          prompt_template: `{{ item }} <<fake tag=${t} id=null steps=${json(null)}>>`,
          output_schema: { type: "null" },
        },
      ],
    });
    expect(job.status).toBe("completed");
    const steps = await allResults(base(), key, job.id, "&stage=steps");
    expect(steps[0].output).toMatchObject({ results: [{ echo: "Hello Ada (36)" }], count: 1, success_count: 1, errors: null });
    expect(steps[1].output).toEqual({ results: [null], count: 1, success_count: 1, error_count: 0, errors: null });
  });

  it("max_concurrent bounds a batch step's elements in flight; input tasks run in parallel before their step", async () => {
    const { key } = await newTenant(base());
    const [tb, ti] = [uniqueTag("mc"), uniqueTag("inp")];
    const job = await run(key, {
      inputs: { list: [1, 2, 3, 4, 5, 6] },
      steps: [
        {
          id: "both",
          type: "llm",
          output_schema: ECHO_SCHEMA,
          prompt_template: "{{ left.echo }} & {{ right.echo }}",
          inputs: {
            left: { task: { prompt_template: `L <<fake tag=${ti} id=l ms=400>>`, output_schema: ECHO_SCHEMA } },
            right: { task: { prompt_template: `R <<fake tag=${ti} id=r ms=400>>`, output_schema: ECHO_SCHEMA } },
          },
        },
        { id: "each", type: "llm", batch: { items: "${list}", max_concurrent: 2 }, prompt_template: `{{ item }} <<fake tag=${tb} id={{ item }} ms=150>>` },
      ],
    });
    expect(job.status).toBe("completed");
    expect((await fakeStats(ti)).max_in_flight).toBe(2);
    expect((await fakeStats(tb)).max_in_flight).toBe(2);
    expect((await fakeStats(tb)).requests).toBe(6);
    const steps = await allResults(base(), key, job.id, "&stage=steps");
    expect(steps[0].output.echo).toBe("L & R");
    const [l, r] = (await fakeStats(ti)).times;
    expect(Math.abs((l as number) - (r as number))).toBeLessThan(400); // the second started before the first (400 ms) had answered
  });

  it("context management: none sees only its inputs, subset the names listed, accumulate_data the earlier steps' notes", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("ctx");
    const probe =
      "{{ secret | default('no-secret') }} {{ first.echo | default('no-first') }} {{ own | default('no-own') }} {{ accumulated | default([]) | length }}";
    const job = await run(key, {
      inputs: { secret: "S" },
      steps: [
        {
          id: "first",
          type: "llm",
          prompt_template: `F <<fake tag=${t} steps=${json({ echo: "E", length: 1, notes: "first-notes" })}>>`,
          output_schema: ECHO_SCHEMA,
        },
        { id: "full", type: "llm", prompt_template: `${probe} <<fake tag=${t}>>`, output_schema: ECHO_SCHEMA },
        {
          id: "bare",
          type: "llm",
          context_management: { inherit_context: "none" },
          inputs: { own: "O" },
          prompt_template: `${probe} <<fake tag=${t}>>`,
          output_schema: ECHO_SCHEMA,
        },
        {
          id: "subset",
          type: "llm",
          context_management: { inherit_context: "subset", subset: ["first"] },
          prompt_template: `${probe} <<fake tag=${t}>>`,
          output_schema: ECHO_SCHEMA,
        },
        {
          id: "acc",
          type: "llm",
          context_management: { accumulate_data: true },
          prompt_template: `{% for a in accumulated %}{{ a.step }}={{ a.notes }};{% endfor %} <<fake tag=${t}>>`,
          output_schema: ECHO_SCHEMA,
        },
      ],
    });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    const out = Object.fromEntries((await allResults(base(), key, job.id, "&stage=steps")).map((s) => [s.step, s.output.echo]));
    expect(out.full).toBe("S E no-own 0");
    expect(out.bare).toBe("no-secret no-first O 0");
    expect(out.subset).toBe("no-secret E no-own 0");
    const note = (echo: string) => JSON.stringify({ echo, length: echo.length });
    expect(job.output.echo).toBe(
      `first=first-notes;full=${note("S E no-own 0")};bare=${note("no-secret no-first O 0")};subset=${note("no-secret E no-own 0")};`,
    );
  });

  it("accumulation_format full_output: later steps see earlier outputs whole", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("full");
    const job = await run(key, {
      context_management: { accumulation_format: "full_output" },
      steps: [
        { id: "one", type: "llm", prompt_template: `x <<fake tag=${t} steps=${json({ echo: "E", length: 1, notes: "short" })}>>`, output_schema: ECHO_SCHEMA },
        {
          id: "two",
          type: "llm",
          context_management: { accumulate_data: true },
          prompt_template: `{% for a in accumulated %}{{ a.step }}:{{ a.output.echo }}/{{ a.notes | default('no-notes') }}{% endfor %} <<fake tag=${t}>>`,
          output_schema: ECHO_SCHEMA,
        },
      ],
    });
    expect(job.output.echo).toBe("one:E/no-notes");
  });

  it("a batch over an earlier step's output that is not a list fails the step with the contract's message; a dry run estimates every step", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("notlist");
    const body = {
      steps: [
        { id: "first", type: "llm", prompt_template: `x <<fake tag=${t}>>`, output_schema: ECHO_SCHEMA },
        { id: "each", type: "llm", batch: { items: "${first}" }, prompt_template: `{{ item }} <<fake tag=${t}>>` },
      ],
    };
    const estimate = await call(base(), "POST", "/v1/pipelines?dry_run=true", { token: key, body: { model: MODEL, ...body } });
    expect(estimate.status).toBe(200);
    expect(estimate.body.estimate).toMatchObject({ calls: 2 });
    const job = await run(key, body);
    expect(job).toMatchObject({
      status: "failed",
      error: { code: "step_failed", step: "each", index: null, message: "Batch items must be an array, got object" },
    });
    expect(job.output).toEqual({ failed_step: "each", accumulated: [{ step: "first", notes: JSON.stringify({ echo: "x", length: 1 }) }] });
  });

  it("agent steps: one sub-session per step or per batch element, its final text in the store, each session readable", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("agent");
    const job = await run(key, {
      inputs: { topic: "owls", people: ["ann", "bob"] },
      steps: [
        {
          id: "research",
          type: "agent",
          inputs: { about: "${topic}" },
          prompt_template: `Research {{ about }} <<fake tag=${t} id=r steps=text:found_{{ about }}>>`,
          max_turns: 2,
        },
        {
          id: "ask",
          type: "agent",
          batch: { items: "${people}", as: "who" },
          prompt_template: `Ask {{ who }} <<fake tag=${t} id={{ who }} steps=text:answer_{{ who }}>>`,
          max_turns: 2,
        },
        { id: "summary", type: "llm", prompt_template: `{{ research }} / {{ ask.results | join(',') }} <<fake tag=${t}>>`, output_schema: ECHO_SCHEMA },
      ],
    });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect(job.output.echo).toBe("found owls / answer ann,answer bob");
    const asked = await allResults(base(), key, job.id, "&stage=ask");
    expect(asked.map((r) => [r.index, r.item, r.output, r.turns])).toEqual([
      [0, "ann", "answer ann", 1],
      [1, "bob", "answer bob", 1],
    ]);
    const session = await call(base(), "GET", `/v1/sessions/${asked[1].session_id}`, { token: key });
    expect(session.status).toBe(200);
    expect(session.body.messages[0].content).toContain("Ask bob");
    const bad = await call(base(), "POST", "/v1/pipelines", {
      token: key,
      body: {
        model: MODEL,
        steps: [
          { id: "a", type: "agent", prompt_template: "x", max_turns: 0, tools: [{ type: "http", name: "t", description: "d", url: "http://10.0.0.1/x" }] },
        ],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: any) => d.path)).toEqual(["steps[0].max_turns"]);
  });

  it("any unique id the contract's pattern allows: a nested step named subtasks, inner, input or steps runs, and an input task may carry its id", async () => {
    // Before stages had kinds in columns, `outer.subtasks` was taken for an agent's children: the job never ended.
    const { key } = await newTenant(base());
    const t = uniqueTag("pipe-ids");
    const llm = (id: string, extra: Record<string, unknown> = {}) => ({
      id,
      type: "llm",
      prompt_template: `Step ${id} <<fake tag=${t} id=${id}>>`,
      output_schema: ECHO_SCHEMA,
      ...extra,
    });
    const job = await run(key, {
      steps: [
        {
          id: "outer",
          type: "sequential",
          steps: [
            llm("subtasks"),
            llm("inner", {
              inputs: { first: { task: { id: "fetch_it", prompt_template: `Fetch <<fake tag=${t} id=fetch>>`, output_schema: ECHO_SCHEMA } } },
              prompt_template: `Step inner {{ first.echo }} <<fake tag=${t} id=inner>>`,
            }),
            llm("input"),
            llm("steps"),
          ],
        },
      ],
    });
    expect(job).toMatchObject({ status: "completed" });
    expect((await fakeStats(t)).requests).toBe(5);
    const steps = await allResults(base(), key, job.id, "&stage=steps");
    expect(
      steps.map((r: { step: string }) => r.step),
      JSON.stringify(steps),
    ).toEqual(["outer.subtasks", "outer.inner", "outer.input", "outer.steps"]);
  });

  it("refuses bad pipelines with 400 at the exact path, storing nothing", async () => {
    const { key } = await newTenant(base());
    const llm = (extra: Record<string, unknown>) => ({ id: "s", type: "llm", prompt_template: "{{ item }}", ...extra });
    const cases: [Record<string, unknown>, string, string][] = [
      [{ steps: [llm({ batch: {} })] }, "steps[0].batch.items", "batch.items is required"],
      [{ steps: [llm({ batch: { items: "list" } })] }, "steps[0].batch.items", "batch.items must be a template reference"],
      [{ inputs: { list: [] }, steps: [llm({ batch: { items: "${list}", as: "1x" } })] }, "steps[0].batch.as", "batch.as must be a valid identifier"],
      [
        { inputs: { list: [] }, steps: [llm({ batch: { items: "${list}", error_handling: "skip" } })] },
        "steps[0].batch.error_handling",
        "batch.error_handling must be 'fail_fast' or 'continue'",
      ],
      [{ inputs: { list: { a: 1 } }, steps: [llm({ batch: { items: "${list}" } })] }, "steps[0].batch.items", "Batch items must be an array, got object"],
      [{ steps: [llm({ inputs: { x: "${nobody}" } })] }, "steps[0].inputs.x", 'unknown name "nobody": neither a pipeline input nor an earlier step'],
      [
        { steps: [llm({ inputs: { x: "${later}" } }), { id: "later", type: "llm", prompt_template: "x" }] },
        "steps[0].inputs.x",
        '"later" is a step that has not finished at this point: a reference may name only earlier steps',
      ],
      [{ inputs: { a: 1 }, steps: [llm({ inputs: { x: "${a.b[x]}" } })] }, "steps[0].inputs.x", 'unexpected "[x]" in "a.b[x]": use .field or [n]'],
      [{ steps: [{ id: "s", type: "loop" }] }, "steps[0].type", "type must be llm, agent, reduce, sequential, filter, classify, rank, resolve or join"],
      [
        {
          steps: [
            {
              id: "s",
              type: "agent",
              prompt_template: "x",
              tools: [1, 2].map(() => ({ type: "http", name: "t", description: "d", url: "http://127.0.0.1:1/x" })),
            },
          ],
        },
        "steps[0].tools[1].name",
        '"t" is also the name of tools[0]',
      ],
      [{ steps: [llm({ id: "2bad" })] }, "steps[0].id", "id must match ^[a-zA-Z_][a-zA-Z0-9_]*$"],
      [
        { inputs: { l: [] }, steps: [{ id: "s", type: "sequential", batch: { items: "${l}" }, steps: [llm({ id: "t" })] }] },
        "steps[0].batch",
        "batch is for llm and agent steps (batches do not nest)",
      ],
      [
        { inputs: { l: [] }, steps: [llm({ inputs: { x: { task: { prompt_template: "p", batch: { items: "${l}" } } } } })] },
        "steps[0].inputs.x.task.batch",
        "batch is for llm and agent steps (batches do not nest)",
      ],
      [
        { steps: [llm({ context_management: { inherit_context: "some" } })] },
        "steps[0].context_management.inherit_context",
        "inherit_context must be 'full', 'none' or 'subset'",
      ],
      [{ steps: [llm({ id: "steps" })] }, "steps[0].id", '"steps" is reserved for a top-level step: ?stage=steps lists the pipeline\'s steps'],
      [{ steps: [llm({ id: "item" })] }, "steps[0].id", '"item" is reserved: the pipeline\'s templates are given a variable of that name'],
      [
        { steps: [llm({ inputs: { x: { task: { id: "2x", prompt_template: "p" } } } })] },
        "steps[0].inputs.x.task.id",
        "id must match ^[a-zA-Z_][a-zA-Z0-9_]*$",
      ],
      [
        { steps: [llm({ inputs: { x: { task: { id: "s", prompt_template: "p" } } } })] },
        "steps[0].inputs.x.task.id",
        'the id "s" is used twice (step ids and input names are one namespace)',
      ],
    ];
    for (const [body, path, message] of cases) {
      const error = await refused(key, body);
      expect(error.code, JSON.stringify(body)).toBe("invalid_request");
      expect(error.details, JSON.stringify([body, error])).toContainEqual({ path, message });
    }
    const nest = (depth: number): Record<string, unknown> =>
      depth === 0 ? llm({ id: "leaf" }) : { id: `n${depth}`, type: "sequential", steps: [nest(depth - 1)] };
    // Six sequential steps one inside another: the sixth is refused; five are accepted.
    expect((await refused(key, { steps: [nest(6)] })).details).toContainEqual({
      path: "steps[0].steps[0].steps[0].steps[0].steps[0].steps[0]",
      message: "sequential steps nest at most 5 levels",
    });
    expect((await call(base(), "POST", "/v1/pipelines", { token: key, body: { model: MODEL, steps: [nest(5)] } })).status).toBe(202);
    const huge = await call(base(), "POST", "/v1/pipelines", {
      token: key,
      body: { model: MODEL, steps: [{ id: "o", type: "sequential", steps: [llm({ inputs: { t: { task: { prompt_template: "x".repeat(100_001) } } } })] }] },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.error.details).toEqual([{ path: "steps[0].steps[0].inputs.t.task.prompt_template", message: "100001 bytes; at most 100000" }]);
    const missing = await refused(key, { inputs: { list: [] }, steps: [llm({ batch: { items: "${list}", as: "doc" } })] });
    expect(missing.code).toBe("template_missing_variable");
    const jobs = await call(base(), "GET", "/v1/jobs", { token: key });
    expect(jobs.body.jobs).toHaveLength(1); // only the 5-level pipeline was stored
  });
});
