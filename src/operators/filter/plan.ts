/**
 * The filter operator: one judgement per item (./judge.ts, with its optional cascade), each
 * answering `{keep, reason}`; the job's output is the kept items' indices, in input order, and
 * how many were dropped (and how many failed: neither kept nor dropped).
 */
import type { TaskView } from "../../engine/types";
import { judgeOperator, type CascadeSpec, type JudgeSpec, type Verdict } from "../judge";

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

/** A cheaper model's `{keep, confidence}` as the confidence that the item should be kept: kept above the cascade's bar, dropped below its floor. */
export function filterVerdict(cascade: CascadeSpec, answer: unknown): Verdict {
  const a = answer as { keep?: unknown; confidence?: unknown; reason?: unknown };
  if (typeof a.confidence !== "number") return null;
  const keepConfidence = a.keep === true ? a.confidence : 1 - a.confidence;
  const reason = typeof a.reason === "string" ? { reason: a.reason } : {};
  if (keepConfidence >= cascade.acceptAbove) return { output: { keep: true, ...reason, confidence: keepConfidence } };
  if (cascade.rejectBelow !== null && keepConfidence <= cascade.rejectBelow) return { output: { keep: false, ...reason, confidence: 1 - keepConfidence } };
  return null;
}

export const filterOperator = judgeOperator<FilterJobSpec>({
  type: "filter",
  decide: filterVerdict,
  output: (_spec, done) => ({ ...filterOutput(done) }),
});
