/** The rank operator run in memory: the top k by score; only the items tied at the cut are compared, pairwise, and ordered by wins; recover plans the comparisons anew. */
import { describe, expect, it } from "vitest";
import { MAX_TIED, rankOperator, type Pair, type RankJobSpec } from "../../../src/operators/rank/plan";
import { MemoryPlan, type Answer } from "./memory-plan";
import { base, call } from "./specs";

const spec = (k: number): RankJobSpec => ({ ...base("rank"), call: call("{{ item }}"), compare: call("{{ item_a }} {{ item_b }}"), k });

/** Scores by item; a comparison's winner by pair (`a-b` → "A" | "B"), else the failure. */
function answers(scores: Record<string, number | null>, winners: Record<string, "A" | "B"> = {}) {
  return (task: { stage: string; input: unknown }, vars: Record<string, unknown>): Answer => {
    if (task.stage === "score") {
      const score = scores[vars.item as string];
      return score === null || score === undefined ? { error: "500" } : { output: { score } };
    }
    const pair = task.input as Pair;
    const winner = winners[`${pair.a}-${pair.b}`];
    return winner ? { output: { winner } } : { error: "timeout" };
  };
}

describe("rank: the top k by score", () => {
  it("without a tie at the cut: no comparison; best first", () => {
    const run = new MemoryPlan(rankOperator, spec(2)).start(["w", "x", "y", "z"]).run(answers({ w: 3, x: 9, y: 5, z: 7 }));
    expect(run.dispatched).toEqual(["score:0", "score:1", "score:2", "score:3"]);
    expect(run.end).toMatchObject({
      status: "completed",
      output: [
        { index: 1, score: 9 },
        { index: 3, score: 7 },
      ],
    });
  });

  it("ties across the cut: every pair of the tied compared once (lower index as A), ordered by wins", () => {
    const run = new MemoryPlan(rankOperator, spec(2)).start(["a", "b", "c", "d", "e"]);
    run.run(answers({ a: 5, b: 8, c: 5, d: 5, e: 2 }, { "0-2": "B", "0-3": "B", "2-3": "A" }));
    expect(run.tasks.get("compare:0")?.input).toMatchObject({ a: 0, b: 2, item_a: "a", item_b: "c" });
    expect(run.dispatched.filter((d) => d.startsWith("compare"))).toHaveLength(3);
    expect(run.end?.output).toEqual([
      { index: 1, score: 8 },
      { index: 2, score: 5, wins: 2 },
    ]);
  });

  it("ties that all fit in the top k are not compared", () => {
    const run = new MemoryPlan(rankOperator, spec(3)).start(["a", "b", "c"]).run(answers({ a: 5, b: 8, c: 5 }));
    expect(run.dispatched.some((d) => d.startsWith("compare"))).toBe(false);
    expect(run.end?.output).toEqual([
      { index: 1, score: 8 },
      { index: 0, score: 5 },
      { index: 2, score: 5 },
    ]);
  });

  it("a failed score leaves its item out; a failed comparison is a win for neither (input order decides)", () => {
    const run = new MemoryPlan(rankOperator, spec(1)).start(["a", "b", "c"]).run(answers({ a: 4, b: 4, c: null }));
    expect(run.end?.output).toEqual([{ index: 0, score: 4, wins: 0 }]);
  });

  it("more than MAX_TIED items tied at the cut: input order, no comparisons", () => {
    const items = Array.from({ length: MAX_TIED + 1 }, (_, i) => `i${i}`);
    const run = new MemoryPlan(rankOperator, spec(2)).start(items).run(answers(Object.fromEntries(items.map((i) => [i, 1]))));
    expect(run.dispatched.some((d) => d.startsWith("compare"))).toBe(false);
    expect(run.end?.output).toEqual([
      { index: 0, score: 1 },
      { index: 1, score: 1 },
    ]);
  });

  it("recover re-runs a failed score and plans the comparisons anew for the tie it makes", () => {
    const scores: Record<string, number | null> = { a: 6, b: null, c: 3 };
    const run = new MemoryPlan(rankOperator, spec(1)).start(["a", "b", "c"]).run(answers(scores));
    expect(run.end?.output).toEqual([{ index: 0, score: 6 }]);
    scores.b = 6;
    expect(run.recover()).toBe(1);
    run.run(answers(scores, { "0-1": "B" }));
    expect(run.end?.output).toEqual([{ index: 1, score: 6, wins: 1 }]);
  });
});
