/**
 * The classify operator's plan: one model call per input in the single stage `items`, each
 * answering `{label, confidence}` (or `{labels, confidence}`); the job's output counts the items
 * per label (every category listed, 0 included) and the failed ones.
 */
import type { CallSpec, JobSpecBase, Operator, PlanReader } from "../../engine/types";
import { ITEMS_STAGE, itemResult, itemsPlan } from "../single-stage";

export interface ClassifyJobSpec extends JobSpecBase {
  type: "classify";
  call: CallSpec;
  labels: string[];
  multiLabel: boolean;
}

export interface ClassifyOutput {
  counts: Record<string, number>;
  failed: number;
}

export function classifyOutput(spec: ClassifyJobSpec, reader: PlanReader): ClassifyOutput {
  const counts = new Map(spec.labels.map((name) => [name, 0]));
  let failed = 0;
  for (const task of reader.done(ITEMS_STAGE)) {
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

export const classifyOperator: Operator<ClassifyJobSpec> = {
  v1: false,
  startedFields: { type: "classify" },
  mainStage: () => ITEMS_STAGE,
  plan: (_spec, inputs) => itemsPlan(inputs),
  advance: (spec, reader) => (reader.open() === 0 ? { ready: [], end: { status: "completed", output: classifyOutput(spec, reader), error: null } } : { ready: [] }),
  work: (spec) => ({ kind: "call", tenantId: spec.tenantId, call: spec.call }),
  vars: (_spec, task) => ({ item: task.input }),
  result: (_spec, task, finish) => ({ stage: task.stage, ...itemResult(task, finish) }), // a staged job's TaskResult
};
