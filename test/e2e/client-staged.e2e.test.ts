/** The client and the CLI on the v2 surface: reduce, dry runs, recover and resume, typed events. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, expectTypeOf, it } from "vitest";
import { Fanout, type Estimate, type TaskResult } from "../../client/src/index.ts";
import { ECHO_SCHEMA, fake, newTenant } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { fanoutCli } from "./harness/cli.ts";
import { removeTempDirs, tempDir } from "./harness/temp-dir.ts";

afterAll(removeTempDirs); // the input files of the CLI runs

const MODEL = "openai/gpt-6-luna";
const foldTemplate = (tag: string) =>
  `{{ accumulator.echo if accumulator else '' }}+{{ current_result.echo }} <<fake tag=${tag} id=r{{ index }} steps={{ original_input.steps or 'ok' }}>>`;

async function client() {
  const { key } = await newTenant(base());
  return { fanout: new Fanout({ apiKey: key, baseUrl: base() }), key };
}

describe("client: reduce, dry runs, recover", () => {
  it("runs a fold, yields its tasks with typed events, and returns the final accumulator", async () => {
    const { fanout } = await client();
    const tag = uniqueTag("client-fold");
    const stages: string[] = [];
    const job = fanout.reduce({
      inputs: { first: { v: "a" }, second: { v: "b" } },
      initialValue: "",
      innerTask: { promptTemplate: `{{ item.v }} ${fake(tag, "i{{ index }}")}`, outputSchema: ECHO_SCHEMA },
      reductionTask: { promptTemplate: foldTemplate(tag), outputSchema: ECHO_SCHEMA },
      model: MODEL,
      onEvent: {
        STAGE_STARTED: (e) => stages.push(`start ${e.stage}`),
        STAGE_COMPLETED: (e) => stages.push(`done ${e.stage}`),
        TASK_COMPLETED: (e) => expectTypeOf(e.result).toEqualTypeOf<TaskResult>(),
      },
    });
    const tasks: TaskResult[] = [];
    for await (const task of job) tasks.push(task);
    expect(tasks).toHaveLength(4);
    expect(tasks.filter((t) => t.stage === "reduction").map((t) => t.name)).toEqual(["first", "second"]);
    expect(await job.output()).toEqual({ echo: "+a+b", length: 4 });
    expect(stages.sort()).toEqual(["done inner", "done reduction", "start inner", "start reduction"]);
    expect((await job.results({ stage: "reduction" })).map((t) => t.accumulator)).toEqual([
      { echo: "+a", length: 2 },
      { echo: "+a+b", length: 4 },
    ]);
  });

  it("estimates without creating, and recovers a failed fold", async () => {
    const { fanout } = await client();
    const tag = uniqueTag("client-recover");
    const options = {
      inputs: [{ v: "x" }, { v: "y", steps: "400,slow:800" }],
      reductionTask: { promptTemplate: foldTemplate(tag), outputSchema: ECHO_SCHEMA, maxTokens: 50 },
      innerTask: { promptTemplate: "{{ item.v }}", outputSchema: ECHO_SCHEMA, maxTokens: 10 },
      model: MODEL,
    };
    const estimate = await fanout.dryRun("reduce", options);
    expectTypeOf(estimate).toEqualTypeOf<Estimate>();
    expect(estimate).toMatchObject({ calls: 4, output_tokens_max: 120 });
    expect((await fanout.jobs()).jobs).toEqual([]);
    const job = fanout.reduce(options);
    const failed = await job.output().then(() => job.status());
    expect(failed).toMatchObject({ status: "failed", error: { code: "task_failed", stage: "reduction", index: 1 } });
    expect(await job.recover()).toMatchObject({ status: "running", recovering: 1 });
    // A fresh handle replays the stream from the start: past the first round's MAP_COMPLETED to the last one.
    const done = await fanout.job(await job.id()).output();
    expect(done).toEqual({ echo: "+x+y", length: 4 });
    expect((await fakeStats(tag)).requests).toBe(3);
  });
});

describe("client and CLI: map-reduce", () => {
  const extractions = (tag: string, b: number, list: unknown[]) => `<<fake tag=${tag} id=m${b} steps=json:${encodeURIComponent(JSON.stringify(list))}>>`;

  it("runs a typed mapReduce() job, with its audit", async () => {
    const { fanout } = await client();
    const tag = uniqueTag("client-mr");
    const job = fanout.mapReduce({
      inputs: [extractions(tag, 0, [{ category: "x", v: 1 }]), extractions(tag, 1, [{ category: "y", v: 2 }])],
      model: MODEL,
      docsPerMapper: 1,
      mapper: { promptTemplate: "{{ item }}" },
      reducer: { promptTemplate: "{{ key }}={{ items | length }}", outputSchema: ECHO_SCHEMA },
      reductionStrategy: "category",
    });
    expect(await job.output()).toEqual([
      { key: "x", output: { echo: "x=1", length: 3 } },
      { key: "y", output: { echo: "y=1", length: 3 } },
    ]);
    const audit = await job.audit();
    expect(audit.nodes.map((n) => n.id)).toEqual(["map:0", "map:1", "reduce:0", "reduce:1"]);
    expect(
      (
        await fanout.dryRun("map-reduce", {
          inputs: ["a"],
          model: MODEL,
          mapper: { promptTemplate: "{{ items }}" },
          reducer: { promptTemplate: "{{ items }}" },
        })
      ).by_stage.map?.calls,
    ).toBe(1);
  });

  it("fanout map-reduce reads JSONL, reports each stage and prints the output", async () => {
    const { key } = await newTenant(base());
    const dir = tempDir("fanout-cli-");
    const tag = uniqueTag("cli-mr");
    const lines = [0, 1, 2].map((b) => JSON.stringify({ text: `doc ${b}`, d: extractions(tag, b, [{ category: b === 1 ? "b" : "a", n: b }]) }));
    writeFileSync(join(dir, "docs.jsonl"), `${lines.join("\n")}\n`);
    writeFileSync(join(dir, "mapper.j2"), "{{ item.d }}");
    writeFileSync(join(dir, "reducer.j2"), "{% for x in items %}{{ x.n }}{% endfor %}");
    writeFileSync(join(dir, "schema.json"), JSON.stringify(ECHO_SCHEMA));
    const args = [
      "map-reduce",
      "--model",
      MODEL,
      "--mapper-template",
      join(dir, "mapper.j2"),
      "--reducer-template",
      join(dir, "reducer.j2"),
      "--schema",
      join(dir, "schema.json"),
      "--input",
      join(dir, "docs.jsonl"),
      "--docs-per-mapper",
      "1",
      "--strategy",
      "flat",
    ];
    const run = await fanoutCli(args, { FANOUT_API_KEY: key, FANOUT_URL: base() });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ echo: "021", length: 3 });
    expect(run.stderr).toMatch(/^stage map: started, 3 tasks$/m);
    expect(run.stderr).toMatch(/^stage shuffle: started, 1 tasks$/m);
    expect(run.stderr).toMatch(/^stage reduce: done, 1 succeeded, 0 failed$/m);
    expect(run.stderr).toMatch(/^progress: 5\/5 done/m);
    const estimate = await fanoutCli(["estimate", ...args], { FANOUT_API_KEY: key, FANOUT_URL: base() });
    expect(JSON.parse(estimate.stdout).by_stage.map.calls).toBe(3);
  });
});

describe("CLI: reduce, estimate, recover", () => {
  it("folds named inputs from a JSON file and prints the final accumulator; estimates; recovers", async () => {
    const { key } = await newTenant(base());
    const env = { FANOUT_API_KEY: key, FANOUT_URL: base() };
    const dir = tempDir("fanout-cli-");
    const tag = uniqueTag("cli-fold");
    writeFileSync(
      join(dir, "reduce.j2"),
      `{{ accumulator.echo if accumulator else '' }}+{{ name }} <<fake tag=${tag} id={{ name }} steps={{ current_result.steps or 'ok' }}>>`,
    );
    writeFileSync(join(dir, "schema.json"), JSON.stringify(ECHO_SCHEMA));
    writeFileSync(join(dir, "inputs.json"), JSON.stringify({ alpha: {}, beta: { steps: "400,ok" }, gamma: {} }));
    const flags = [
      "--model",
      MODEL,
      "--reduction-template",
      join(dir, "reduce.j2"),
      "--schema",
      join(dir, "schema.json"),
      "--input",
      join(dir, "inputs.json"),
      "--initial",
      '""',
    ];

    const estimate = await fanoutCli(["estimate", "reduce", ...flags], env);
    expect(estimate.code).toBe(0);
    expect(JSON.parse(estimate.stdout)).toMatchObject({ calls: 3, by_stage: { reduction: { calls: 3 } } });

    const failed = await fanoutCli(["reduce", ...flags], env);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toEqual({ echo: "+alpha", length: 6 }); // the partial accumulator
    const id = /job (job_\w+) failed/.exec(failed.stderr)?.[1] ?? "";
    expect(failed.stderr).toContain(`fanout recover ${id}`);
    const recovered = await fanoutCli(["recover", id], env);
    expect(recovered).toMatchObject({ code: 0 });
    expect(recovered.stdout).toMatch(/running: 2 tasks to run again/);
    let job: { status: string; output: unknown } = { status: "running", output: null };
    for (let i = 0; i < 50 && job.status === "running"; i++) {
      job = JSON.parse((await fanoutCli(["status", id], env)).stdout);
      if (job.status === "running") await new Promise((r) => setTimeout(r, 200));
    }
    expect(job).toMatchObject({ status: "completed", output: { echo: "+alpha+beta+gamma" } });
    const resume = await fanoutCli(["resume", id], env);
    expect(resume.code).toBe(2); // not paused: 409
    expect(resume.stderr).toMatch(/conflict/);
  });
});
