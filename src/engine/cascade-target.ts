/**
 * Cascade thresholds learned for a stated target (contract v4, "Cascades with a guarantee"): the
 * cheaper model answered every item; a seeded uniform sample was also answered by the job's model
 * (the oracle). From the sample, each candidate pair of thresholds gets a one-sided Clopper–Pearson
 * lower bound on the metric (agreement with the oracle) at 1 − δ/K, δ = 1 − confidence and K the
 * candidates that need a test (a union bound over the candidates tried: every bound holds at once
 * with probability ≥ confidence). Of the candidates whose bound reaches the target, the one that
 * sends the fewest of the other items to the oracle wins. Sending every item to the oracle agrees
 * with it exactly, so it always qualifies: when nothing else does, that is the answer (`met`
 * false: the cascade decided nothing).
 *
 * Filter (binary): the cheaper model's keep-confidence k; keep when k ≥ accept, drop when k ≤
 * reject, else the oracle. Metrics against the oracle: accuracy (the same answer), precision (of
 * the kept, the share the oracle keeps), recall (of what the oracle keeps, the share kept).
 * Classify (label): the confidence c of the cheaper model's label; its label when c ≥ accept,
 * else the oracle's; accuracy only. A cheaper call that failed (score null) always goes on.
 */
import { clopperPearsonLower, clopperPearsonUpper } from "./stats";
import { seeded } from "../lib/seeded";

export type TargetMetric = "accuracy" | "precision" | "recall";

export interface CascadeTarget {
  metric: TargetMetric;
  value: number;
  confidence: number;
  /** The sample: a size, or a share of the items (rounded up); at most the items. */
  sample: { size: number } | { fraction: number };
  seed: number;
}

/** A sampled item: the cheaper model's score (null: its call failed) and what the oracle said. */
export type SamplePoint = { kind: "binary"; score: number | null; oracleKeep: boolean } | { kind: "label"; score: number | null; agrees: boolean };

/** Thresholds: null is "never" (nothing accepted, or nothing rejected, by the cascade). */
export interface Thresholds {
  acceptAbove: number | null;
  rejectBelow: number | null;
}

export interface Learned extends Thresholds {
  met: boolean;
  /** Sampled items with the oracle's answer (the statistics' n). */
  sampleSize: number;
  estimate: { metric: TargetMetric; value: number; lower_bound: number; confidence: number };
  /** The candidates tried (K of the union bound counts those whose metric was not exact). */
  candidates: number;
}

const grid = (from: number, to: number, step: number): number[] => {
  const out: number[] = [];
  for (let i = Math.round(from / step); i >= Math.round(to / step); i--) out.push(Math.round(i * step * 1000) / 1000);
  return out;
};

/** The candidates, fixed before any answer is seen: filter a 0.05 grid of both thresholds, classify a 0.02 grid. */
export function candidatesFor(kind: SamplePoint["kind"]): Thresholds[] {
  if (kind === "label") return [null, ...grid(1, 0, 0.02)].map((acceptAbove) => ({ acceptAbove, rejectBelow: null }));
  const accepts = [null, ...grid(1, 0.5, 0.05)];
  const rejects = [null, ...grid(0.5, 0, 0.05)];
  const out: Thresholds[] = [];
  for (const acceptAbove of accepts)
    for (const rejectBelow of rejects) if (acceptAbove === null || rejectBelow === null || rejectBelow < acceptAbove) out.push({ acceptAbove, rejectBelow });
  return out;
}

type Decision = "accept" | "reject" | "oracle";

export function decide(t: Thresholds, score: number | null): Decision {
  if (score === null) return "oracle";
  if (t.acceptAbove !== null && score >= t.acceptAbove) return "accept";
  if (t.rejectBelow !== null && score <= t.rejectBelow) return "reject";
  return "oracle";
}

/** The metric on the sample as successes of trials; `exact`: the rule makes it 1 whatever the data. */
type Tally = { successes: number; trials: number; exact: boolean };

function tally(metric: TargetMetric, t: Thresholds, points: SamplePoint[]): Tally {
  const exact =
    (metric === "accuracy" && t.acceptAbove === null && t.rejectBelow === null) ||
    (metric === "precision" && t.acceptAbove === null) ||
    (metric === "recall" && t.rejectBelow === null);
  let successes = 0;
  let trials = 0;
  for (const p of points) {
    const d = decide(t, p.score);
    if (p.kind === "label") {
      trials++;
      if (d === "oracle" || p.agrees) successes++;
      continue;
    }
    const kept = d === "oracle" ? p.oracleKeep : d === "accept";
    if (metric === "accuracy") {
      trials++;
      if (kept === p.oracleKeep) successes++;
    } else if (metric === "precision" && kept) {
      trials++;
      if (p.oracleKeep) successes++;
    } else if (metric === "recall" && p.oracleKeep) {
      trials++;
      if (kept) successes++;
    }
  }
  return { successes, trials, exact };
}

/** How many of the other items each candidate sends to the oracle, from their cheaper scores (sorted once). */
function oracleCalls(t: Thresholds, sorted: number[], failed: number): number {
  const accepted = t.acceptAbove === null ? 0 : sorted.length - countBelow(sorted, t.acceptAbove, false);
  const rejected = t.rejectBelow === null ? 0 : countBelow(sorted, t.rejectBelow, true);
  return failed + sorted.length - accepted - rejected;
}

/** How many of the sorted scores are below `x` (or at most `x`, `inclusive`): a binary search. */
function countBelow(sorted: number[], x: number, inclusive: boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const v = sorted[mid] as number;
    if (v < x || (inclusive && v === x)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The thresholds for `target` from the sampled points and the other items' cheaper scores (null:
 * the cheaper call failed). Deterministic: the same answers, the same thresholds.
 */
export function learnThresholds(target: Pick<CascadeTarget, "metric" | "value" | "confidence">, points: SamplePoint[], others: (number | null)[]): Learned {
  const kind = points[0]?.kind ?? "binary";
  const candidates = candidatesFor(kind);
  const tallies = candidates.map((t) => tally(target.metric, t, points));
  const tested = tallies.filter((t) => !t.exact).length;
  const level = 1 - (1 - target.confidence) / Math.max(1, tested); // each bound's confidence under the union bound
  const sorted = others.filter((s): s is number => s !== null).sort((a, b) => a - b);
  const failed = others.length - sorted.length;
  let best: { index: number; calls: number; lower: number } | null = null;
  candidates.forEach((t, index) => {
    const { successes, trials, exact } = tallies[index] as Tally;
    const lower = exact
      ? 1
      : trials === 0
        ? 0
        : target.metric === "accuracy" || kind === "label"
          ? 1 - clopperPearsonUpper(trials - successes, trials, level)
          : clopperPearsonLower(successes, trials, level);
    if (lower < target.value) return;
    const calls = oracleCalls(t, sorted, failed);
    if (!best || calls < best.calls || (calls === best.calls && lower > best.lower)) best = { index, calls, lower };
  });
  // The all-oracle candidate is exact for every metric: one always qualifies.
  const chosen = best as unknown as { index: number; lower: number };
  const t = candidates[chosen.index] as Thresholds;
  const { successes, trials, exact } = tallies[chosen.index] as Tally;
  return {
    ...t,
    met: t.acceptAbove !== null || t.rejectBelow !== null,
    sampleSize: points.length,
    estimate: { metric: target.metric, value: exact || trials === 0 ? 1 : successes / trials, lower_bound: chosen.lower, confidence: target.confidence },
    candidates: candidates.length,
  };
}

/** A seeded uniform sample of `size` distinct indices of `total` (Floyd's algorithm; ../lib/seeded.ts), in increasing order. */
export function drawSample(total: number, size: number, seed: number): number[] {
  const random = seeded(seed);
  const chosen = new Set<number>();
  const n = Math.min(size, total);
  for (let j = total - n; j < total; j++) {
    const t = Math.floor(random() * (j + 1));
    chosen.add(chosen.has(t) ? j : t);
  }
  return [...chosen].sort((a, b) => a - b);
}
