/** The map-reduce operator's plan and advance, run in memory: map → shuffle → reduce levels → synthesis, failures, recover. */
import { describe, expect, it } from "vitest";
import { MAP, mapReduceOperator, REDUCE, SHUFFLE, SYNTHESIS, type MapReduceJobSpec } from "../../../src/operators/map-reduce/plan";
import type { Strategy } from "../../../src/operators/map-reduce/levels";
import type { TaskView } from "../../../src/engine/types";
import { MemoryPlan, type Answer } from "./memory-plan";
import { base, call } from "./specs";

const spec = (strategy: Strategy, over: Partial<MapReduceJobSpec> = {}): MapReduceJobSpec => ({
  ...base("map_reduce"),
  mapper: call("Extract from {{ item }}", { shape: "extractions" }),
  reducer: call("Reduce {{ items }}"),
  synthesis: null,
  documents: 4,
  docsPerMapper: 1,
  strategy,
  fanIn: 2,
  shuffle: { key: "category", dedupe: "none", dedupeFields: null, conflict: "first" },
  mapFailures: "fail",
  ...over,
});

/** Four documents, each about its own category; a reducer joins what it got, a synthesis lists it. */
const DOCS = ["apples", "bees", "cars", "dunes"];
const answers =
  (failing: Set<string> = new Set()) =>
  (task: TaskView, vars: Record<string, unknown>): Answer => {
    const id = `${task.stage}:${task.index}`;
    if (failing.has(id)) return { error: `${id} failed` };
    if (task.stage === MAP) return { output: { extractions: [{ category: String(vars.item)[0], text: vars.item }] } };
    if (task.stage === SYNTHESIS) return { output: `summary of ${JSON.stringify(vars.results)}` };
    const items = vars.items as unknown[];
    return { output: items.map((i) => (typeof i === "string" ? i : String((i as { text: string }).text))).join("|") };
  };

describe("map-reduce: map, shuffle, reduce", () => {
  it("hierarchical: level 0 takes fan_in groups per call, level 1 their outputs; the top one's output is the job's", () => {
    const run = new MemoryPlan(mapReduceOperator, spec("hierarchical")).start(DOCS).run(answers());
    expect(run.dispatched).toEqual(["map:0", "map:1", "map:2", "map:3", "reduce:0", "reduce:1", "reduce:2"]);
    expect(run.reader.task(SHUFFLE, 0)).toMatchObject({ state: "done", output: { documents: 4, groups: ["a", "b", "c", "d"], extractions: 4, left_out: [] } });
    expect(run.reader.task(REDUCE, 2)?.input).toMatchObject({ level: 1, items: ["apples|bees", "cars|dunes"], inputs: [0, 1], sources: [0, 1, 2, 3] });
    expect(run.end).toEqual({ status: "completed", output: "apples|bees|cars|dunes", error: null });
  });

  it("category with synthesis: one reduce call per group, then the synthesis over every group's output", () => {
    const run = new MemoryPlan(mapReduceOperator, spec("category", { synthesis: call("Sum up {{ results }}") })).start(DOCS).run(answers());
    expect(run.stages.get(REDUCE)?.total).toBe(4);
    expect(run.dispatched.slice(-1)).toEqual(["synthesis:0"]);
    expect(run.end?.output).toBe(`summary of ${JSON.stringify(["a", "b", "c", "d"].map((key, i) => ({ key, output: DOCS[i] })))}`);
  });

  it("map_failures fail: a failed mapper batch fails the job at the end of the map stage, before any reduce", () => {
    const run = new MemoryPlan(mapReduceOperator, spec("flat")).start(DOCS).run(answers(new Set(["map:1"])));
    expect(run.dispatched).toEqual(["map:0", "map:1", "map:2", "map:3"]);
    expect(run.end).toMatchObject({
      status: "failed",
      error: { code: "task_failed", stage: MAP, index: 1, message: "1 mapper batch(es) failed; first (batch 1): map:1 failed" },
    });
  });

  it("map_failures continue: the failed batch's documents are left out (listed by the shuffle) and the rest are reduced", () => {
    const run = new MemoryPlan(mapReduceOperator, spec("flat", { mapFailures: "continue" })).start(DOCS).run(answers(new Set(["map:1"])));
    expect(run.reader.task(SHUFFLE, 0)?.output).toMatchObject({ groups: ["a", "c", "d"], left_out: [1] });
    expect(run.end).toEqual({ status: "completed", output: "apples|cars|dunes", error: null });
  });

  it("a failed reduce task fails the job; recover runs it again with its inputs, keeping the mappers' work", () => {
    const run = new MemoryPlan(mapReduceOperator, spec("hierarchical")).start(DOCS).run(answers(new Set(["reduce:1"])));
    expect(run.end).toMatchObject({ status: "failed", error: { code: "task_failed", stage: REDUCE, index: 1 } });
    run.recover();
    run.dispatched.length = 0;
    run.run(answers());
    expect(run.dispatched).toEqual(["reduce:1", "reduce:2"]);
    expect(run.end?.output).toBe("apples|bees|cars|dunes");
  });

  it("recover of a continue job's failed batch redoes the shuffle and plans the reduce stage anew, with every batch", () => {
    const run = new MemoryPlan(mapReduceOperator, spec("flat", { mapFailures: "continue" })).start(DOCS).run(answers(new Set(["map:1"])));
    run.recover();
    run.dispatched.length = 0;
    run.run(answers());
    expect(run.dispatched).toEqual(["map:1", "reduce:0"]);
    expect(run.end?.output).toBe("apples|bees|cars|dunes");
  });
});
