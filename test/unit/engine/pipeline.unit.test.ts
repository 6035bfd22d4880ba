/** The pipeline operator's plan and advance, run in memory: steps in order over the shared store, input tasks, batches, a reduce step, failure and recover. */
import { describe, expect, it } from "vitest";
import { pipelineOperator, STEPS, type PipelineJobSpec } from "../../../src/operators/pipeline/plan";
import { readSteps } from "../../../src/operators/pipeline/steps";
import type { TaskDefaults } from "../../../src/operators/task-call";
import type { TaskView } from "../../../src/engine/types";
import { MemoryPlan, type Answer } from "./memory-plan";
import { base } from "./specs";

const DEFAULTS: TaskDefaults = { model: "openai/m", max_retries: 1, concurrency: 4, metadata: {}, timeout_secs: 60, retry_guidance: "retry" };

function pipeline(inputs: Record<string, unknown>, steps: unknown[]): PipelineJobSpec {
  return { ...base("pipeline"), inputs, units: readSteps({} as Env, DEFAULTS, inputs, undefined, steps), format: "notes_only" };
}

/** Each call answers with what its template would say of its variables: the step, and the names it read. */
const echo =
  (failing: Set<string> = new Set()) =>
  (task: TaskView, vars: Record<string, unknown>): Answer => {
    const id = `${task.stage}:${task.index}`;
    if (failing.has(id)) return { error: `${id} failed` };
    if ("file" in vars) return { output: `summary of ${String(vars.file)}` };
    if ("accumulator" in vars) return { output: `${String(vars.accumulator)}+${String(vars.current_result)}` };
    if (task.stage === "list") return { output: ["a.txt", "b.txt"] };
    return {
      output: `${task.stage} saw ${Object.keys(vars)
        .filter((k) => k !== "accumulated")
        .sort()
        .join(",")}`,
    };
  };

const llm = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: "llm", prompt_template: `{{ raw }} ${id}`, ...extra });

describe("pipeline: steps over a shared store", () => {
  it("runs the steps in order, each seeing the earlier ones; the last step's output is the job's, and each step has its marker", () => {
    const spec = pipeline({ raw: "R" }, [
      llm("first"),
      { id: "outer", type: "sequential", steps: [llm("inner"), llm("input", { prompt_template: "{{ first }} {{ inner }}" })] }, // ids that were once reserved
    ]);
    const run = new MemoryPlan(pipelineOperator, spec).start([]).run(echo());
    expect(run.dispatched).toEqual(["first:0", "outer.inner:0", "outer.input:0"]);
    expect(run.end).toEqual({ status: "completed", output: "outer.input saw first,inner", error: null }); // the names its template reads
    expect(run.reader.done(STEPS).map((t) => (t.input as { step: string }).step)).toEqual(["first", "outer.inner", "outer.input"]);
  });

  it("runs a step's input tasks first, in parallel, and gives the step their outputs under their names", () => {
    const spec = pipeline({ raw: "R" }, [
      llm("main", {
        prompt_template: "{{ a }} {{ b }}",
        inputs: { a: { task: { prompt_template: "{{ raw }} A" } }, b: { task: { id: "task_b", prompt_template: "{{ raw }} B" } } },
      }),
    ]);
    const run = new MemoryPlan(pipelineOperator, spec).start([]);
    expect(run.pending().map((t) => t.stage)).toEqual(["main.input.a", "main.input.b"]); // both ready at once
    run.run(echo());
    expect(run.dispatched.at(-1)).toBe("main:0");
    expect(run.end?.output).toBe("main saw a,b");
  });

  it("a batch step runs once per element of an earlier step's list and stores the batch result; a reduce step folds it", () => {
    const spec = pipeline({ raw: "R" }, [
      llm("list"),
      llm("summaries", { prompt_template: "{{ file }}", batch: { items: "${list}", as: "file", max_concurrent: 1 } }),
      {
        id: "joined",
        type: "reduce",
        inputs_from: "${summaries.results}",
        initial_value: "",
        reduction_task: { prompt_template: "{{ accumulator }} {{ current_result }}" },
      },
    ]);
    const run = new MemoryPlan(pipelineOperator, spec).start([]).run(echo());
    expect(run.dispatched).toEqual(["list:0", "summaries:0", "summaries:1", "joined:0", "joined:1"]);
    expect(run.reader.task(STEPS, 1)?.output).toMatchObject({ results: ["summary of a.txt", "summary of b.txt"], count: 2, success_count: 2, errors: null });
    expect(run.end?.output).toBe("+summary of a.txt+summary of b.txt");
  });

  it("a failed step fails the job with its path and the partial result; recover goes on from that step only", () => {
    const spec = pipeline({ raw: "R" }, [llm("first"), { id: "outer", type: "sequential", steps: [llm("second"), llm("third")] }]);
    const run = new MemoryPlan(pipelineOperator, spec).start([]).run(echo(new Set(["outer.second:0"])));
    expect(run.end).toMatchObject({
      status: "failed",
      output: { failed_step: "outer.second", accumulated: [{ step: "first" }] },
      error: { code: "step_failed", step: "outer.second", stage: "outer.second", index: null, message: "outer.second:0 failed" },
    });
    run.recover();
    run.dispatched.length = 0;
    run.run(echo());
    expect(run.dispatched).toEqual(["outer.second:0", "outer.third:0"]);
    expect(run.end?.status).toBe("completed");
  });
});
