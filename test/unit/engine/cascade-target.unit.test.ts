/**
 * Cascade thresholds learned for a target (src/engine/cascade-target.ts): the seeded sample, the
 * candidates, the choice, and — the point of it all — the guarantee, checked by simulation: over
 * many independent samples of a population whose cheaper model is right more often the surer it
 * is, the thresholds learned meet the target against the oracle on the whole population in at
 * least `confidence` of the runs.
 */
import { describe, expect, it } from "vitest";
import { candidatesFor, decide, drawSample, learnThresholds, type SamplePoint, type TargetMetric } from "../../../src/engine/cascade-target";
import { seeded } from "../seeded";

/** A population for a filter: the oracle keeps about `keepShare`; the cheaper model's keep-confidence is right with probability rising with its certainty. */
function population(n: number, seed: number, keepShare = 0.4) {
  const random = seeded(seed);
  return Array.from({ length: n }, () => {
    const oracleKeep = random() < keepShare;
    const certainty = 0.5 + random() / 2; // how sure the cheaper model is, 0.5–1
    const right = random() < (certainty > 0.9 ? 0.99 : certainty); // surer, more often right: above 0.9, nearly always
    const saysKeep = right ? oracleKeep : !oracleKeep;
    return { oracleKeep, score: saysKeep ? certainty : 1 - certainty };
  });
}

/** The metric the thresholds reach on the whole population, against the oracle. */
function truth(
  metric: TargetMetric,
  t: { acceptAbove: number | null; rejectBelow: number | null },
  pop: { oracleKeep: boolean; score: number | null }[],
): number {
  let s = 0;
  let n = 0;
  for (const p of pop) {
    const d = decide(t, p.score);
    const kept = d === "oracle" ? p.oracleKeep : d === "accept";
    if (metric === "accuracy") {
      n++;
      if (kept === p.oracleKeep) s++;
    } else if (metric === "precision" && kept) {
      n++;
      if (p.oracleKeep) s++;
    } else if (metric === "recall" && p.oracleKeep) {
      n++;
      if (kept) s++;
    }
  }
  return n === 0 ? 1 : s / n;
}

describe("the seeded sample", () => {
  it("draws the same distinct indices for the same seed, in order, and other ones for another", () => {
    const a = drawSample(10_000, 200, 7);
    expect(a).toEqual(drawSample(10_000, 200, 7));
    expect(new Set(a).size).toBe(200);
    expect(a).toEqual([...a].sort((x, y) => x - y));
    expect(a.every((i) => i >= 0 && i < 10_000)).toBe(true);
    expect(drawSample(10_000, 200, 8)).not.toEqual(a);
    expect(drawSample(5, 200, 1)).toEqual([0, 1, 2, 3, 4]); // never more than the items
  });

  it("is uniform: over many seeds every index is drawn about as often", () => {
    const counts = new Array<number>(20).fill(0);
    for (let seed = 0; seed < 4_000; seed++) for (const i of drawSample(20, 5, seed)) counts[i] = (counts[i] as number) + 1;
    // Each index: 4,000 × 5/20 = 1,000 expected; a binomial's sd is ~27.
    for (const c of counts) expect(Math.abs(c - 1_000)).toBeLessThan(120);
  });
});

describe("learning the thresholds", () => {
  it("fixes its candidates before any answer is seen: a filter's pairs keep reject under accept", () => {
    const pairs = candidatesFor("binary");
    expect(pairs.every((t) => t.acceptAbove === null || t.rejectBelow === null || t.rejectBelow < t.acceptAbove)).toBe(true);
    expect(pairs).toContainEqual({ acceptAbove: null, rejectBelow: null });
    expect(candidatesFor("label")).toHaveLength(52);
  });

  it("lets a cheaper model that agrees with the oracle decide everything it is sure of, and says so", () => {
    const points: SamplePoint[] = Array.from({ length: 300 }, (_, i) => ({ kind: "binary", score: i % 2 ? 0.99 : 0.01, oracleKeep: i % 2 === 1 }));
    const others = Array.from({ length: 1_000 }, (_, i) => (i % 2 ? 0.99 : 0.01));
    const learned = learnThresholds({ metric: "accuracy", value: 0.95, confidence: 0.95 }, points, others);
    expect(learned.met).toBe(true);
    expect(learned.acceptAbove).not.toBeNull();
    expect(learned.rejectBelow).not.toBeNull();
    expect(others.every((s) => decide(learned, s) !== "oracle")).toBe(true); // no other item goes to the oracle
    expect(learned.estimate).toMatchObject({ metric: "accuracy", value: 1, confidence: 0.95 });
    expect(learned.estimate.lower_bound).toBeGreaterThanOrEqual(0.95);
  });

  it("sends every item to the oracle when the cheaper model's confidence says nothing (met false, the metric exact)", () => {
    const random = seeded(3);
    const points: SamplePoint[] = Array.from({ length: 200 }, () => ({ kind: "binary", score: random(), oracleKeep: random() < 0.5 }));
    const learned = learnThresholds(
      { metric: "accuracy", value: 0.9, confidence: 0.95 },
      points,
      Array.from({ length: 500 }, () => random()),
    );
    expect(learned).toMatchObject({ acceptAbove: null, rejectBelow: null, met: false, estimate: { value: 1, lower_bound: 1 } });
  });

  it("counts a failed cheaper call as the oracle's item, and a label's agreement for classify", () => {
    const points: SamplePoint[] = [
      ...Array.from({ length: 150 }, () => ({ kind: "label" as const, score: 0.97, agrees: true })),
      ...Array.from({ length: 50 }, () => ({ kind: "label" as const, score: 0.3, agrees: false })),
      ...Array.from({ length: 10 }, () => ({ kind: "label" as const, score: null, agrees: false })),
    ];
    const learned = learnThresholds({ metric: "accuracy", value: 0.9, confidence: 0.95 }, points, [0.97, 0.3, null]);
    expect(learned.met).toBe(true);
    expect(learned.acceptAbove).toBeGreaterThan(0.3);
    expect(learned.acceptAbove).toBeLessThanOrEqual(0.97);
    expect(learned.rejectBelow).toBeNull();
    expect(learned.sampleSize).toBe(210);
  });

  for (const [metric, value] of [
    ["accuracy", 0.9],
    ["accuracy", 0.95],
    ["precision", 0.9],
    ["recall", 0.9],
  ] as const) {
    it(`holds its guarantee: ${metric} ≥ ${value} at confidence 0.95 in at least 95 % of 200 independent samples`, () => {
      const pop = population(3_000, 11);
      let met = 0;
      let decidedByCascade = 0;
      const runs = 200;
      for (let run = 0; run < runs; run++) {
        const sampled = new Set(drawSample(pop.length, 300, 1_000 + run));
        const points: SamplePoint[] = [...sampled].map((i) => ({ kind: "binary", score: pop[i]?.score as number, oracleKeep: pop[i]?.oracleKeep as boolean }));
        const others = pop.filter((_, i) => !sampled.has(i)).map((p) => p.score);
        const learned = learnThresholds({ metric, value, confidence: 0.95 }, points, others);
        // The final answers: sampled items are the oracle's; the others as the thresholds decide.
        const final = pop.map((p, i) => (sampled.has(i) ? { ...p, score: null } : p));
        if (truth(metric, { acceptAbove: learned.acceptAbove, rejectBelow: learned.rejectBelow }, final) >= value) met++;
        if (learned.met) decidedByCascade++;
      }
      expect(met / runs).toBeGreaterThanOrEqual(0.95);
      expect(decidedByCascade).toBeGreaterThan(0); // the procedure does use the cheaper model on this population
    });
  }
});
