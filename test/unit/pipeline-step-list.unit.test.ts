import { describe, expect, it } from "vitest";
import { stepList, type StepEntry } from "../../src/operators/pipeline/step-list";

const stage = (name: string, status = "pending", input_tokens = 0) => ({ name, status, usage: { input_tokens, output_tokens: 0 } });
const marker = (index: number, step: string): StepEntry => ({
  index,
  success: true,
  step,
  status: "completed",
  output: step,
  usage: { input_tokens: 1, output_tokens: 1 },
});

describe("a pipeline's step list", () => {
  it("groups stages by the step each says it is part of, whatever their names", () => {
    const of = (name: string, step: string, status = "pending", input_tokens = 0) => ({ ...stage(name, status, input_tokens), step });
    // A step `subtasks` inside `outer`, a step `inner` with an input task `input`, an agent step's children: names that look like each other's parts.
    const stages = [
      of("outer.subtasks", "outer.subtasks", "completed", 1),
      of("inner.input.input", "inner", "completed", 2),
      of("inner", "inner", "running", 3),
      stage("steps"),
      of("outer.subtasks.subtasks", "outer.subtasks", "running", 4),
    ];
    expect(stepList(stages, []).map((s) => [s.step, s.status, s.usage.input_tokens])).toEqual([
      ["outer.subtasks", "running", 5],
      ["inner", "running", 5],
    ]);
  });

  it("reads a job stored before stages carried their step with the plan's naming rule", () => {
    expect(stepList([stage("a.input.x"), stage("a"), stage("s/items"), stage("steps")], []).map((s) => s.step)).toEqual(["a", "s"]);
  });

  it("lists steps whose ids end like a part's (inner, input, subtasks, steps) inside a sequential step, which has no stage", () => {
    const stages = [
      stage("outer.subtasks"),
      stage("outer.inner"),
      stage("outer.inner.input.first"),
      stage("outer.input"),
      stage("outer.steps"),
      stage("steps"),
    ];
    const list = stepList(stages, [marker(0, "outer.subtasks"), marker(1, "outer.inner")]);
    expect(list.map((s) => [s.index, s.step, s.status])).toEqual([
      [0, "outer.subtasks", "completed"],
      [1, "outer.inner", "completed"],
      [2, "outer.input", "pending"],
      [3, "outer.steps", "pending"],
    ]);
  });

  it("leaves out a leaf step's parts: its input tasks, its inner tasks and its agents' children, whose usage is the step's", () => {
    const stages = [
      stage("a.input.x", "completed", 5),
      stage("a", "running", 7),
      stage("b.inner", "running", 2),
      stage("b"),
      stage("steps"),
      stage("a.subtasks", "running", 11),
    ];
    const list = stepList(stages, []);
    expect(list.map((s) => [s.step, s.status, s.usage.input_tokens])).toEqual([
      ["a", "running", 23],
      ["b", "running", 2],
    ]);
  });
});
