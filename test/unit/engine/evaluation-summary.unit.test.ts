/**
 * What an evaluation says (src/operators/evaluation/summary.ts): gold compared as each operator's
 * answer means it, two orders of a comparison made one preference, and every rate with its Wilson
 * interval.
 */
import { describe, expect, it } from "vitest";
import { evaluationOutput, goldMatch, preferenceOf, type EvalItem, type ItemVerdict } from "../../../src/operators/evaluation/summary";
import { wilsonInterval } from "../../../src/engine/stats";
import type { TaskView } from "../../../src/engine/types";

const item = (over: Partial<EvalItem>): EvalItem => ({ index: 0, input: "x", output: null, success: true, error: null, judged: false, ...over });
const view = (input: EvalItem, output: ItemVerdict): TaskView => ({
  stage: "items",
  index: input.index,
  state: "done",
  success: true,
  output,
  input,
  error: null,
});
const call = (winner: string | null): TaskView => ({
  stage: "judge_ab",
  index: 0,
  state: "done",
  success: winner !== null,
  output: winner ? { winner } : null,
  input: null,
  error: winner ? null : "boom",
});

describe("gold labels", () => {
  it("compare a filter's keep, a classification's label or set, and any other output field by field", () => {
    expect(goldMatch("filter", item({ output: { keep: true, reason: "r" }, expected: true }))).toBe(true);
    expect(goldMatch("filter", item({ output: { keep: true }, expected: { keep: false } }))).toBe(false);
    expect(goldMatch("classify", item({ output: { label: "a", confidence: 0.9 }, expected: "a" }))).toBe(true);
    expect(goldMatch("classify", item({ output: { labels: ["b", "a"] }, expected: ["a", "b"] }))).toBe(true);
    expect(goldMatch("classify", item({ output: { labels: ["a"] }, expected: ["a", "b"] }))).toBe(false);
    expect(goldMatch("map", item({ output: { title: "T", year: 2017, extra: 1 }, expected: { year: 2017, title: "T" } }))).toBe(true);
    expect(goldMatch("map", item({ output: { title: "T", year: 2018 }, expected: { year: 2017, title: "T" } }))).toBe(false);
    expect(goldMatch("map", item({ output: "plain", expected: "plain" }))).toBe(true);
    expect(goldMatch("filter", item({ success: false, output: null, expected: false }))).toBe(false); // a failed result never matches
  });
});

describe("a comparison asked in both orders", () => {
  it("prefers a job only when both orders do; any disagreement is a tie; a failed call decides nothing", () => {
    expect(preferenceOf(call("A"), call("B")).preferred).toBe("a"); // A first, then A again as "B"
    expect(preferenceOf(call("B"), call("A")).preferred).toBe("b");
    expect(preferenceOf(call("A"), call("A")).preferred).toBe("tie"); // the judge picked whatever came first: position bias
    expect(preferenceOf(call("tie"), call("B")).preferred).toBe("tie");
    expect(preferenceOf(call("A"), call(null))).toEqual({ ab: "A", ba: null, preferred: null });
  });
});

describe("the evaluation's output", () => {
  const spec = { criteria: ["faithful", "brief"], confidence: 0.95, sourceType: "filter", seed: 3, mode: "judge" as const };

  it("gives each criterion's pass rate with its Wilson interval, counting a failed judge call apart", () => {
    const done = [
      view(item({ index: 0, judged: true }), { verdicts: { faithful: { pass: true, reason: "" }, brief: { pass: false, reason: "" } }, failed: true }),
      view(item({ index: 1, judged: true }), { verdicts: { faithful: { pass: true, reason: "" }, brief: { pass: true, reason: "" } }, failed: false }),
      view(item({ index: 2, judged: true }), { verdicts: null, judge_error: "boom", failed: false }),
    ];
    const out = evaluationOutput(spec, done);
    expect(out).toMatchObject({ sample_size: 2, judge_failed: 1, confidence: 0.95, seed: 3 });
    expect(out.criteria).toEqual({
      faithful: { passed: 2, judged: 2, pass_rate: 1, interval: wilsonInterval(2, 2, 0.95) },
      brief: { passed: 1, judged: 2, pass_rate: 0.5, interval: wilsonInterval(1, 2, 0.95) },
    });
  });

  it("gives gold accuracy with its interval, and precision, recall and F1 of keep for a filter", () => {
    const gold = (index: number, keep: boolean, expected: boolean) => item({ index, output: { keep }, expected });
    const items = [gold(0, true, true), gold(1, true, false), gold(2, false, true), gold(3, false, false), gold(4, true, true)];
    const out = evaluationOutput(
      { ...spec, mode: "gold" },
      items.map((i) => view(i, { gold_match: goldMatch("filter", i) })),
    );
    expect(out.gold).toEqual({ n: 5, matched: 3, accuracy: 0.6, interval: wilsonInterval(3, 5, 0.95), precision: 2 / 3, recall: 2 / 3, f1: 2 / 3 });
    expect(out.criteria).toBeUndefined();
  });

  it("gives a map's gold accuracy field by field", () => {
    const a = item({ index: 0, output: { t: "x", y: 1 }, expected: { t: "x", y: 2 } });
    const b = item({ index: 1, output: { t: "x", y: 2 }, expected: { t: "x", y: 2 } });
    const out = evaluationOutput(
      { ...spec, sourceType: "map", mode: "gold" },
      [a, b].map((i) => view(i, { gold_match: goldMatch("map", i) })),
    );
    expect(out.gold).toMatchObject({ n: 2, matched: 1, by_field: { t: { n: 2, accuracy: 1 }, y: { n: 2, accuracy: 0.5 } } });
  });

  it("gives A/B wins, ties and A's win rate (a tie half a win) with its interval", () => {
    const pref = (preferred: "a" | "b" | "tie" | null, index: number) => view(item({ index, judged: true }), { preference: { ab: null, ba: null, preferred } });
    const out = evaluationOutput({ ...spec, mode: "compare" }, [pref("a", 0), pref("a", 1), pref("tie", 2), pref("b", 3), pref(null, 4)]);
    expect(out).toMatchObject({ sample_size: 4, judge_failed: 1, compare: { wins_a: 2, wins_b: 1, ties: 1, win_rate_a: { value: 2.5 / 4 } } });
    const [lo, hi] = (out.compare as { win_rate_a: { interval: [number, number] } }).win_rate_a.interval;
    expect(lo).toBeLessThan(0.625);
    expect(hi).toBeGreaterThan(0.625);
  });
});
