/**
 * Cascades (src/operators/judge.ts) run in memory: the cheaper model answers every item first;
 * what it is sure of is the item's without a call of the job's model, the rest (and the items
 * whose cheaper call failed) go on; the job's output says who decided how many; recover re-runs
 * what failed at either level and never a cheaper call whose item went on.
 */
import { describe, expect, it } from "vitest";
import { filterOperator, type FilterJobSpec } from "../../../src/operators/filter/plan";
import { classifyOperator, type ClassifyJobSpec } from "../../../src/operators/classify/plan";
import { MemoryPlan, type Answer } from "./memory-plan";
import { base, call } from "./specs";

const cascade = (rejectBelow: number | null) => ({ call: { ...call("Keep {{ item }}?"), model: "openai/cheap" }, acceptAbove: 0.9, rejectBelow });
const filterSpec: FilterJobSpec = { ...base("filter"), call: call("Keep {{ item }}?"), cascade: cascade(0.1) };

/** The cheaper model's answers by item; the job's model answers `keep: item starts with "k"`. */
function filterAnswers(cheap: Record<string, Answer>) {
  return (task: { stage: string }, vars: Record<string, unknown>): Answer => {
    const item = vars.item as string;
    if (task.stage === "cascade") return cheap[item] ?? { error: "no answer" };
    return item === "k-fails" ? { error: "500" } : { output: { keep: item.startsWith("k") } };
  };
}

describe("filter with a cascade", () => {
  it("takes the cheaper model's sure answers, passes the unsure and the failed on, and counts who decided", () => {
    const inputs = ["k-sure", "d-sure", "k-unsure", "d-cheap-failed", "k-weak-drop"];
    const run = new MemoryPlan(filterOperator, filterSpec).start(inputs);
    run.run(
      filterAnswers({
        "k-sure": { output: { keep: true, confidence: 0.95 } }, // kept: 0.95 ≥ 0.9
        "d-sure": { output: { keep: false, confidence: 0.95 } }, // dropped: keep-confidence 0.05 ≤ 0.1
        "k-unsure": { output: { keep: true, confidence: 0.6 } }, // passed on
        "k-weak-drop": { output: { keep: false, confidence: 0.85 } }, // keep-confidence 0.15: passed on
      }),
    );
    expect(run.dispatched.filter((d) => d.startsWith("items:"))).toEqual(["items:2", "items:3", "items:4"]);
    expect(run.end).toMatchObject({ status: "completed", output: { kept: [0, 2, 4], dropped: 2, failed: 0, decided_by: { cascade: 2, model: 3 } } });
    expect(run.tasks.get("items:0")).toMatchObject({ output: { keep: true, confidence: 0.95 }, input: { item: "k-sure", decided_by: "cascade" } });
    expect(run.tasks.get("items:1")).toMatchObject({ output: { keep: false, confidence: 0.95 } });
  });

  it("calls the cheaper model with its own call and the job's model with the job's; vars are the item itself at both levels", () => {
    expect(filterOperator.work(filterSpec, "cascade")).toMatchObject({ kind: "call", call: { model: "openai/cheap" } });
    expect(filterOperator.work(filterSpec, "items")).toMatchObject({ kind: "call", call: { model: filterSpec.call.model } });
    expect(filterOperator.vars(filterSpec, { stage: "items", index: 0, input: { item: "x", decided_by: "model" } })).toEqual({ item: "x" });
    expect(filterOperator.vars(filterSpec, { stage: "cascade", index: 0, input: "x" })).toEqual({ item: "x" });
  });

  it("results say who decided, with the item as it was given", () => {
    const finish = {
      success: true,
      output: { keep: true },
      error: null,
      errorKind: null,
      attempts: 0,
      usage: { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0 },
      costUsd: 0,
      details: null,
      sessionId: null,
    };
    expect(filterOperator.result(filterSpec, { stage: "items", index: 3, input: { item: "x", decided_by: "cascade" } }, finish)).toMatchObject({
      stage: "items",
      index: 3,
      input: "x",
      decided_by: "cascade",
    });
    expect(filterOperator.result({ ...filterSpec, cascade: null }, { stage: "items", index: 3, input: "x" }, finish)).not.toHaveProperty("decided_by");
  });

  it("recover re-runs the job's model's failures, and not a cheaper call whose item went on", () => {
    const run = new MemoryPlan(filterOperator, filterSpec).start(["k-fails", "k-ok"]);
    run.run(filterAnswers({ "k-ok": { output: { keep: true, confidence: 0.99 } } })); // k-fails: the cheaper call fails, then the job's model
    expect(run.end).toMatchObject({ output: { kept: [1], failed: 1, decided_by: { cascade: 1, model: 1 } } });
    expect(run.recover()).toBe(1);
    expect(run.pending().map((t) => `${t.stage}:${t.index}`)).toEqual(["items:0"]);
  });

  it("estimates every cheaper call and, at most, every item passed on", () => {
    const plan = filterOperator.plan(filterSpec, ["a", "b"]);
    const assumed = filterOperator.estimateTasks?.(filterSpec, plan);
    expect(assumed?.tasks.map((t) => `${t.stage}:${t.index}`)).toEqual(["cascade:0", "cascade:1", "items:0", "items:1"]);
    expect(assumed?.note).toMatch(/At most/);
  });
});

describe("classify with a cascade", () => {
  it("keeps the cheaper model's label when its confidence is at least accept_above; else the job's model labels", () => {
    const spec: ClassifyJobSpec = { ...base("classify"), call: call("{{ item }}"), labels: ["a", "b"], multiLabel: false, cascade: cascade(null) };
    const run = new MemoryPlan(classifyOperator, spec).start(["x", "y"]);
    run.run((task, vars) =>
      task.stage === "cascade" ? { output: { label: "a", confidence: vars.item === "x" ? 0.9 : 0.89 } } : { output: { label: "b", confidence: 0.7 } },
    );
    expect(run.dispatched).toEqual(["cascade:0", "cascade:1", "items:1"]);
    expect(run.end).toMatchObject({ output: { counts: { a: 1, b: 1 }, failed: 0, decided_by: { cascade: 1, model: 1 } } });
  });
});
