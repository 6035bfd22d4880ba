/** The classify operator's plan, run in memory: the job's output counts the items per label (every label listed), multi-label answers once per label, failures apart. */
import { describe, expect, it } from "vitest";
import { classifyOperator, type ClassifyJobSpec } from "../../../src/operators/classify/plan";
import { labelSchema } from "../../../src/operators/classify/schema";
import { MemoryPlan } from "./memory-plan";
import { base, call } from "./specs";

const spec = (multiLabel: boolean): ClassifyJobSpec => ({ ...base("classify"), call: call("{{ item }}"), labels: ["a", "b", "c"], multiLabel });

describe("classify: a label per item, counted", () => {
  it("counts each item under its label; every label is listed, 0 included; failures counted apart", () => {
    const run = new MemoryPlan(classifyOperator, spec(false)).start(["x", "y", "z", "w"]);
    const label: Record<string, string> = { x: "a", y: "a", z: "b" };
    run.run((_task, vars) => (vars.item === "w" ? { error: "timeout" } : { output: { label: label[vars.item as string], confidence: 0.9 } }));
    expect(run.end).toMatchObject({ status: "completed", output: { counts: { a: 2, b: 1, c: 0 }, failed: 1 } });
  });

  it("multi-label: each label of an item once, repeats ignored", () => {
    const run = new MemoryPlan(classifyOperator, spec(true)).start(["x", "y"]);
    run.run((_task, vars) => ({ output: { labels: vars.item === "x" ? ["a", "c", "a"] : [], confidence: 0.5 } }));
    expect(run.end).toMatchObject({ output: { counts: { a: 1, b: 0, c: 1 }, failed: 0 } });
  });

  it("the answer's schema holds the model to the labels, with a confidence in [0, 1]", () => {
    expect(labelSchema(["a", "b"], false)).toMatchObject({
      properties: { label: { enum: ["a", "b"] }, confidence: { minimum: 0, maximum: 1 } },
      required: ["label", "confidence"],
    });
    expect(labelSchema(["a", "b"], true)).toMatchObject({
      properties: { labels: { items: { enum: ["a", "b"] }, uniqueItems: true } },
      required: ["labels", "confidence"],
    });
  });
});
