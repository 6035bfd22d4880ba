/** The map operator's plan and advance, run in memory: one task per item, the job ends when every item has, failed ones included. */
import { describe, expect, it } from "vitest";
import { mapOperator } from "../../../src/operators/map/plan";
import { MemoryPlan } from "./memory-plan";
import { base, call } from "./specs";

describe("map: one call per item", () => {
  it("dispatches every item in input order with the item as its variable, and completes once all have ended, failures included", () => {
    const run = new MemoryPlan(mapOperator, { ...base("map"), call: call("{{ item }}") }).start(["a", "b", "c"]);
    expect(run.pending().map((t) => t.index)).toEqual([0, 1, 2]);
    run.run((task, vars) => (vars.item === "b" ? { error: "no" } : { output: String(vars.item).toUpperCase() }));
    expect(run.dispatched).toEqual(["items:0", "items:1", "items:2"]);
    expect(run.end).toMatchObject({ status: "completed" });
    expect(run.stages.get("items")).toMatchObject({ total: 3, completed: 3, succeeded: 2, failed: 1 });
  });

  it("an empty list completes at once", () => {
    expect(new MemoryPlan(mapOperator, { ...base("map"), call: call("{{ item }}") }).start([]).end).toMatchObject({ status: "completed" });
  });
});
