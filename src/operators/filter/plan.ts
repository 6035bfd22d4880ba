/**
 * The filter operator's plan: one model call per input in the single stage `items`, each answering
 * `{keep, reason}`; the job's output is the kept items' indices, in input order, and how many
 * were dropped (and how many failed: neither kept nor dropped).
 */
import type { CallSpec, JobSpecBase, Operator, PlanReader } from "../../engine/types";
import { ITEMS_STAGE, itemResult, itemsPlan } from "../single-stage";

export interface FilterJobSpec extends JobSpecBase {
  type: "filter";
  call: CallSpec;
}

export interface FilterOutput {
  kept: number[];
  dropped: number;
  failed: number;
}

export function filterOutput(reader: PlanReader): FilterOutput {
  const out: FilterOutput = { kept: [], dropped: 0, failed: 0 };
  for (const task of reader.done(ITEMS_STAGE)) {
    if (!task.success) out.failed++;
    else if ((task.output as { keep?: unknown } | null)?.keep === true) out.kept.push(task.index);
    else out.dropped++;
  }
  return out;
}

export const filterOperator: Operator<FilterJobSpec> = {
  v1: false,
  startedFields: { type: "filter" },
  mainStage: () => ITEMS_STAGE,
  plan: (_spec, inputs) => itemsPlan(inputs),
  advance: (_spec, reader) => (reader.open() === 0 ? { ready: [], end: { status: "completed", output: filterOutput(reader), error: null } } : { ready: [] }),
  work: (spec) => ({ kind: "call", tenantId: spec.tenantId, call: spec.call }),
  vars: (_spec, task) => ({ item: task.input }),
  result: (_spec, task, finish) => ({ stage: task.stage, ...itemResult(task, finish) }), // a staged job's TaskResult
};
