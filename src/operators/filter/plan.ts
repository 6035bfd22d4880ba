/**
 * The filter operator: one judgement per item (./judge.ts, with its optional cascade), each
 * answering `{keep, reason}`; the job's output is the kept items' indices, in input order, and
 * how many were dropped (and how many failed: neither kept nor dropped).
 */
import type { TaskView } from "../../engine/types";
import type { Thresholds } from "../../engine/cascade-target";
import { judgeOperator, type JudgeSpec, type Verdict } from "../judge";

export interface FilterJobSpec extends JudgeSpec {
  type: "filter";
}

export interface FilterOutput {
  kept: number[];
  dropped: number;
  failed: number;
}

export function filterOutput(done: TaskView[]): FilterOutput {
  const out: FilterOutput = { kept: [], dropped: 0, failed: 0 };
  for (const task of done) {
    if (!task.success) out.failed++;
    else if ((task.output as { keep?: unknown } | null)?.keep === true) out.kept.push(task.index);
    else out.dropped++;
  }
  return out;
}

/** A cheaper model's `{keep, confidence}` as the confidence that the item should be kept (null: it said none); `field`: the yes-or-no's name (a join's `match`). */
export function keepConfidence(answer: unknown | null, field = "keep"): number | null {
  const a = answer as Record<string, unknown> | null;
  if (typeof a?.confidence !== "number") return null;
  return a[field] === true ? a.confidence : 1 - a.confidence;
}

/** A cheaper model's answer as the item's: kept at or above the cascade's bar, dropped at or below its floor (null: never). */
export function filterVerdict(cascade: Thresholds, answer: unknown, field = "keep"): Verdict {
  const keep = keepConfidence(answer, field);
  if (keep === null) return null;
  const a = answer as { reason?: unknown };
  const reason = typeof a.reason === "string" ? { reason: a.reason } : {};
  if (cascade.acceptAbove !== null && keep >= cascade.acceptAbove) return { output: { [field]: true, ...reason, confidence: keep } };
  if (cascade.rejectBelow !== null && keep <= cascade.rejectBelow) return { output: { [field]: false, ...reason, confidence: 1 - keep } };
  return null;
}

export const filterOperator = judgeOperator<FilterJobSpec>({
  type: "filter",
  decide: (cascade, answer) => filterVerdict(cascade, answer),
  score: (answer) => keepConfidence(answer),
  point: (cheap, oracle) => ({ kind: "binary", score: keepConfidence(cheap), oracleKeep: (oracle as { keep?: unknown } | null)?.keep === true }),
  output: (_spec, done) => ({ ...filterOutput(done) }),
});
