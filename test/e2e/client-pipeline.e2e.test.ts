/** The client's typed `pipeline()` and `pipelineDocument()` (JSON and XML), and `fanout pipeline run` / `fanout estimate pipeline`. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, expectTypeOf, it } from "vitest";
import { Fanout, type StepResult, type TaskResult } from "../../client/src/index.ts";
import { ECHO_SCHEMA, newTenant } from "./harness/api.ts";
import { base, uniqueTag } from "./harness/context.ts";
import { fanoutCli } from "./harness/cli.ts";
import { removeTempDirs, tempDir } from "./harness/temp-dir.ts";

afterAll(removeTempDirs); // the input files of the CLI runs

const MODEL = "openai/gpt-6-luna";

describe("client: pipelines", () => {
  it("runs a typed pipeline (camelCase steps), yields every task, and returns the last step's output", async () => {
    const { key } = await newTenant(base());
    const fanout = new Fanout({ apiKey: key, baseUrl: base() });
    const t = uniqueTag("cpipe");
    const steps: string[] = [];
    const job = fanout.pipeline({
      model: MODEL,
      inputs: { names: ["ann", "bob"] },
      steps: [
        {
          id: "hello",
          type: "llm",
          promptTemplate: `hi {{ who }} <<fake tag=${t}>>`,
          outputSchema: ECHO_SCHEMA,
          batch: { items: "${names}", as: "who", errorHandling: "continue", maxConcurrent: 2 },
        },
        {
          id: "wrap",
          type: "sequential",
          contextManagement: { accumulateData: true },
          steps: [
            {
              id: "join",
              type: "llm",
              promptTemplate: `{{ hello.results | map(attribute='echo') | join(', ') }} {{ extra.echo }} <<fake tag=${t}>>`,
              outputSchema: ECHO_SCHEMA,
              inputs: { extra: { task: { promptTemplate: `more <<fake tag=${t}>>`, outputSchema: ECHO_SCHEMA } } },
            },
          ],
        },
      ],
      onEvent: { TASK_COMPLETED: (e) => e.stage === "steps" && steps.push(String((e.result as { step?: string }).step)) },
    });
    const tasks: TaskResult[] = [];
    for await (const task of job) tasks.push(task);
    expect(tasks).toHaveLength(2 + 1 + 1 + 2); // two elements, the input task, join, two step markers
    expect(steps).toEqual(["hello", "wrap.join"]);
    expect(await job.output()).toEqual({ echo: "hi ann, hi bob more", length: 19 });
    const listed = (await job.results({ stage: "steps" })) as unknown as StepResult[];
    expectTypeOf(listed[0]!.usage.input_tokens).toEqualTypeOf<number>();
    expect(listed.map((s) => s.step)).toEqual(["hello", "wrap.join"]);
    const estimate = await fanout.dryRun("pipelines", {
      model: MODEL,
      inputs: { names: ["a", "b", "c"] },
      steps: [{ id: "e", type: "llm", promptTemplate: "{{ item }}", batch: { items: "${names}" } }],
    });
    expect(estimate.calls).toBe(3);
  });

  it("runs operator steps typed in camelCase: a filter with a cascade, then a rank of the kept items", async () => {
    const { key } = await newTenant(base());
    const fanout = new Fanout({ apiKey: key, baseUrl: base() });
    const job = fanout.pipeline({
      model: MODEL,
      inputs: { papers: ["attention", "ferns", "bert"] },
      steps: [
        // Offline the fake answers from the schema: every paper kept, the cheaper model sure (confidence 1), every score alike.
        {
          id: "screen",
          type: "filter",
          inputsFrom: "${papers}",
          predicateTemplate: "About ML? {{ item }}",
          cascade: { model: "openai/gpt-6-sol", acceptAbove: 0.9 },
        },
        { id: "best", type: "rank", inputsFrom: "${screen.items}", criteria: "influence", k: 1 },
      ],
    });
    const output = (await job.output()) as { index: number; item: string }[];
    expect(output).toHaveLength(1);
    expect(["attention", "ferns", "bert"]).toContain(output[0]!.item);
    const steps = (await job.results({ stage: "steps" })) as unknown as StepResult[];
    expect(steps.map((s) => s.step)).toEqual(["screen", "best"]);
    expect(steps[0]!.output).toMatchObject({ kept: [0, 1, 2], dropped: 0, decided_by: { cascade: 3, model: 0 } });
  });

  it("takes a document as the API does: a JSON body with the model as a parameter, or an XML task", async () => {
    const { key } = await newTenant(base());
    const fanout = new Fanout({ apiKey: key, baseUrl: base() });
    const t = uniqueTag("cdoc");
    const json = await fanout
      .pipelineDocument(
        { steps: [{ id: "one", type: "llm", prompt_template: `{{ x }} <<fake tag=${t}>>`, output_schema: ECHO_SCHEMA }] },
        { model: MODEL, inputs: { x: "from json" } },
      )
      .output();
    expect(json).toEqual({ echo: "from json", length: 9 });
    const xml = `<task type="sequential"><steps><task><description>&lt;&lt;fake tag=${t}&gt;&gt;</description><inputs><input name="x" from="x"/></inputs></task></steps></task>`;
    const fromXml = (await fanout.pipelineDocument(xml, { model: MODEL, inputs: { x: "from xml" } }).output()) as string;
    expect(JSON.parse(fromXml).echo).toBe("x: from xml");
    expect((await fanout.estimateDocument(xml, { model: MODEL, inputs: { x: "y" } })).calls).toBe(1);
  });
});

describe("cli: fanout pipeline run", () => {
  it("runs a .json and a .xml pipeline with per-step progress, and estimates one", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("clipipe");
    const dir = tempDir("fanout-pipe-");
    const body = {
      steps: [
        { id: "first", type: "llm", prompt_template: `{{ topic }} <<fake tag=${t}>>`, output_schema: ECHO_SCHEMA },
        { id: "second", type: "llm", prompt_template: `about {{ first.echo }} <<fake tag=${t}>>`, output_schema: ECHO_SCHEMA },
      ],
    };
    writeFileSync(join(dir, "pipeline.json"), JSON.stringify(body));
    writeFileSync(join(dir, "inputs.json"), JSON.stringify({ topic: "owls" }));
    writeFileSync(
      join(dir, "pipeline.xml"),
      `<task type="sequential" model="${MODEL}"><inputs><input name="topic">bats</input></inputs><steps><task id="only"><description>&lt;&lt;fake tag=${t}&gt;&gt;</description><inputs><input name="t" from="topic"/></inputs></task></steps></task>`,
    );
    const env = { FANOUT_API_KEY: key, FANOUT_URL: base() };
    const run = await fanoutCli(["pipeline", "run", join(dir, "pipeline.json"), "--model", MODEL, "--inputs", join(dir, "inputs.json")], env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ echo: "about owls", length: 10 });
    expect(run.stderr).toContain("step first: started, 1 task\n");
    expect(run.stderr).toContain("step first: done\nstep second: started, 1 task\n");
    const xml = await fanoutCli(["pipeline", "run", join(dir, "pipeline.xml")], env);
    expect(xml.code, xml.stderr).toBe(0);
    expect(JSON.parse(JSON.parse(xml.stdout)).echo).toBe("t: bats");
    const estimate = await fanoutCli(["estimate", "pipeline", join(dir, "pipeline.json"), "--model", MODEL, "--inputs", join(dir, "inputs.json")], env);
    expect(JSON.parse(estimate.stdout).calls).toBe(2);
    const bad = await fanoutCli(["pipeline", "run", join(dir, "pipeline.json")], env); // no model anywhere
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("model");
  });
});
