/** The reduce operator's plan and advance, run in memory: the fold's order, its critical path, a failure's context, recover. */
import { describe, expect, it } from "vitest";
import { entries, INNER, REDUCTION, reduceOperator, type ReduceJobSpec } from "../../../src/operators/reduce/plan";
import { MemoryPlan, type Answer } from "./memory-plan";
import { base, call } from "./specs";

const spec = (inner: boolean, total: number): ReduceJobSpec => ({
  ...base("reduce"),
  inner: inner ? call("Summarise {{ item }}") : null,
  reduction: call("{{ accumulator }} + {{ current_result }}"),
  initialValue: "start",
  total,
});

/** Inner tasks upper-case their item; a reduction appends the current result to the accumulator. */
const fold =
  (fail: string | null = null) =>
  (task: { stage: string }, vars: Record<string, unknown>): Answer => {
    if (task.stage === INNER) return { output: String(vars.item).toUpperCase() };
    if (vars.name === fail) return { error: "the model said no" };
    return { output: `${String(vars.accumulator)}+${String(vars.current_result)}` };
  };

const inputs = entries({ a: "x", b: "y", c: "z" });

describe("reduce: an ordered fold", () => {
  it("folds the entries in order, each reduction seeing the one before's accumulator", () => {
    const run = new MemoryPlan(reduceOperator, spec(false, 3)).start(inputs).run(fold());
    expect(run.dispatched).toEqual(["reduction:0", "reduction:1", "reduction:2"]);
    expect(run.end).toEqual({ status: "completed", output: "start+x+y+z", error: null });
  });

  it("dispatches a reduction as soon as its inputs are there, ahead of the inner tasks waiting (the critical path first)", () => {
    const run = new MemoryPlan(reduceOperator, spec(true, 3)).start(inputs);
    expect(run.pending().map((t) => `${t.stage}:${t.index}`)).toEqual(["inner:0", "inner:1", "inner:2"]); // reductions wait, blocked
    run.run(fold());
    expect(run.dispatched).toEqual(["inner:0", "reduction:0", "inner:1", "reduction:1", "inner:2", "reduction:2"]);
    expect(run.end?.output).toBe("start+X+Y+Z");
  });

  it("an empty list completes at once with the initial value", () => {
    const run = new MemoryPlan(reduceOperator, spec(false, 0)).start([]);
    expect(run.end).toEqual({ status: "completed", output: "start", error: null });
  });

  it("a failed reduction fails the job with the last accumulator reached and the entry's name; recover goes on from it", () => {
    const run = new MemoryPlan(reduceOperator, spec(true, 3)).start(inputs).run(fold("b"));
    expect(run.end).toEqual({
      status: "failed",
      output: "start+X",
      error: { code: "task_failed", message: "the model said no", stage: REDUCTION, index: 1, step: "b" },
    });
    expect(run.recover()).toBe(3); // the failed reduction, and what never ran: inner 2 and reduction 2
    run.dispatched.length = 0;
    run.run(fold());
    expect(run.dispatched).toEqual(["reduction:1", "inner:2", "reduction:2"]); // inner 0, 1 and reduction 0 kept
    expect(run.end?.output).toBe("start+X+Y+Z");
  });
});
