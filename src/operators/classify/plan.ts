/**
 * The classify operator: one judgement per item (./judge.ts, with its optional cascade), each
 * answering `{label, confidence}` (or `{labels, confidence}`); the job's output counts the items
 * per label (every category listed, 0 included) and the failed ones.
 */
import type { TaskView } from "../../engine/types";
import type { Thresholds } from "../../engine/cascade-target";
import { judgeOperator, type JudgeSpec, type Verdict } from "../judge";
import { sameLabels } from "./labels";

export interface ClassifyJobSpec extends JudgeSpec {
  type: "classify";
  labels: string[];
  multiLabel: boolean;
}

export interface ClassifyOutput {
  counts: Record<string, number>;
  failed: number;
}

export function classifyOutput(spec: ClassifyJobSpec, done: TaskView[]): ClassifyOutput {
  const counts = new Map(spec.labels.map((name) => [name, 0]));
  let failed = 0;
  for (const task of done) {
    if (!task.success) {
      failed++;
      continue;
    }
    const out = task.output as { label?: unknown; labels?: unknown };
    const given = spec.multiLabel ? (Array.isArray(out.labels) ? out.labels : []) : [out.label];
    for (const label of new Set(given)) if (typeof label === "string" && counts.has(label)) counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return { counts: Object.fromEntries(counts), failed };
}

/** The confidence a cheaper model gives its label (null: none, or no answer). */
export function labelConfidence(answer: unknown | null): number | null {
  const confidence = (answer as { confidence?: unknown } | null)?.confidence;
  return typeof confidence === "number" ? confidence : null;
}

/** A cheaper model's label is the item's when it is sure enough of it (null: never). */
export function classifyVerdict(cascade: Thresholds, answer: unknown): Verdict {
  const confidence = labelConfidence(answer);
  return confidence !== null && cascade.acceptAbove !== null && confidence >= cascade.acceptAbove ? { output: answer } : null;
}

export const classifyOperator = judgeOperator<ClassifyJobSpec>({
  type: "classify",
  decide: classifyVerdict,
  score: labelConfidence,
  point: (cheap, oracle) => ({ kind: "label", score: labelConfidence(cheap), agrees: sameLabels(cheap, oracle) }),
  output: (spec, done) => ({ ...classifyOutput(spec, done) }),
});
