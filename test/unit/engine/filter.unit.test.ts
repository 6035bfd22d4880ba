/** The filter operator's plan, run in memory: one task per item; the job's output is the kept indices in input order, the dropped and the failed counted. */
import { describe, expect, it } from "vitest";
import { filterOperator } from "../../../src/operators/filter/plan";
import { MemoryPlan } from "./memory-plan";
import { base, call } from "./specs";

const spec = { ...base("filter"), call: call("Keep {{ item }}?") };

describe("filter: keep the items that meet a condition", () => {
  it("lists the kept indices in input order whatever order the answers come in; a keep that is not true is a drop", () => {
    const run = new MemoryPlan(filterOperator, spec).start(["a", "b", "c", "d", "e"]);
    expect(run.pending().map((t) => [t.index, t.input])).toEqual([
      [0, "a"],
      [1, "b"],
      [2, "c"],
      [3, "d"],
      [4, "e"],
    ]);
    const keep: Record<string, unknown> = { a: true, b: false, c: "yes", d: true };
    run.run((_task, vars) => (vars.item === "e" ? { error: "401" } : { output: { keep: keep[vars.item as string] } }));
    expect(run.end).toMatchObject({ status: "completed", output: { kept: [0, 3], dropped: 2, failed: 1 } });
  });

  it("an empty list keeps nothing", () => {
    expect(new MemoryPlan(filterOperator, spec).start([]).end).toMatchObject({ status: "completed", output: { kept: [], dropped: 0, failed: 0 } });
  });

  it("each result is a staged job's task result, its output `{keep, reason}` as answered", () => {
    const finish = {
      success: true,
      output: { keep: false, reason: "off topic" },
      error: null,
      errorKind: null,
      attempts: 1,
      usage: { input_tokens: 3, output_tokens: 4, cached_input_tokens: 0, cache_write_input_tokens: 0 },
      costUsd: 0.5,
      details: null,
      sessionId: null,
    };
    expect(filterOperator.result(spec, { stage: "items", index: 2, input: "c" }, finish)).toEqual({
      stage: "items",
      index: 2,
      input: "c",
      output: { keep: false, reason: "off topic" },
      success: true,
      error: null,
      error_kind: null,
      attempts: 1,
      usage: { input_tokens: 3, output_tokens: 4, cached_input_tokens: 0, cache_write_input_tokens: 0 },
      cost_usd: 0.5,
    });
  });
});
