/**
 * The evaluation operator (contract v4, "Evaluations"): how good another job's answers are. Its
 * inputs are the evaluated items, read from the evaluated job's results at submission (that job
 * never changes): each `{index, input, output, success, error, judged, expected?, b?}`.
 *
 * Stages: `judge` — one judge call per sampled item, answering every criterion `{pass, reason}`;
 * or, comparing two jobs, `judge_ab` and `judge_ba` — the same pair asked in both orders; then
 * `items` — every evaluated item's verdicts, gold match and preference, a task the operator
 * finishes itself once its judge calls are done (at once for an item with gold only). The job's
 * output is the rates with their intervals (./summary.ts).
 */
import type { Advance, CallSpec, JobSpecBase, Operator, PlanReader, TaskSeed, TaskView } from "../../engine/types";
import { ITEMS_STAGE, itemResult } from "../single-stage";
import { evaluationOutput, goldMatch, preferenceOf, type EvalItem, type ItemVerdict } from "./summary";

export const JUDGE_STAGE = "judge";
export const AB_STAGE = "judge_ab";
export const BA_STAGE = "judge_ba";

export interface EvaluationJobSpec extends JobSpecBase {
  type: "evaluation";
  /** The evaluated job (A), its type (how gold compares), and the job compared with it (B). */
  evaluates: string;
  sourceType: string;
  compareWith: string | null;
  criteria: string[];
  /** `judge`: one judge call per sampled item; `compare`: two, one per order; `gold`: none. */
  mode: "judge" | "compare" | "gold";
  /** The judge's call (with gold only, never made: it names the model the job is on). */
  call: CallSpec;
  confidence: number;
  seed: number;
}

const judgeStages = (spec: EvaluationJobSpec): string[] => (spec.mode === "compare" ? [AB_STAGE, BA_STAGE] : spec.mode === "judge" ? [JUDGE_STAGE] : []);

/** The item at `position`, decided once its judge calls are done; null while one is not. */
function decide(spec: EvaluationJobSpec, reader: PlanReader, position: number): (TaskSeed & { output: unknown }) | null {
  const task = reader.task(ITEMS_STAGE, position);
  if (!task || task.state === "done") return null;
  const item = task.input as EvalItem;
  const calls = item.judged ? judgeStages(spec).map((stage) => reader.task(stage, position)) : [];
  if (calls.some((c) => c?.state !== "done")) return null;
  const verdict: ItemVerdict = {};
  if (spec.mode === "judge" && item.judged) {
    const call = calls[0] as TaskView;
    verdict.verdicts = call.success ? ((call.output as { verdicts: ItemVerdict["verdicts"] }).verdicts ?? null) : null;
    if (!call.success) verdict.judge_error = call.error;
    verdict.failed = verdict.verdicts ? Object.values(verdict.verdicts ?? {}).some((v) => v.pass === false) : false;
  }
  if (spec.mode === "compare" && item.judged) verdict.preference = preferenceOf(calls[0] as TaskView, calls[1] as TaskView);
  if ("expected" in item) verdict.gold_match = goldMatch(spec.sourceType, item);
  return { stage: ITEMS_STAGE, index: position, input: item, output: verdict };
}

function positionsToDecide(spec: EvaluationJobSpec, reader: PlanReader, trigger: TaskView | null): number[] {
  if (trigger && judgeStages(spec).includes(trigger.stage)) return [trigger.index];
  if (trigger) return [];
  return Array.from({ length: reader.extent(ITEMS_STAGE) }, (_, i) => i);
}

export const evaluationOperator: Operator<EvaluationJobSpec> = {
  v1: false,
  startedFields: { type: "evaluation" },
  mainStage: () => ITEMS_STAGE,
  plan: (spec, inputs) => {
    const items = inputs as EvalItem[];
    const judged = items.flatMap((item, position) => (item.judged ? [{ item, position }] : []));
    const stages = [...judgeStages(spec).map((name) => ({ name, total: judged.length })), { name: ITEMS_STAGE, total: items.length }];
    const calls = judgeStages(spec).flatMap((stage) => judged.map(({ item, position }) => ({ stage, index: position, input: item })));
    // Every item's task is planned, blocked: the operator finishes it itself when its calls are done.
    const decisions = items.map((item, position) => ({ stage: ITEMS_STAGE, index: position, input: item, blocked: true }));
    return { stages, tasks: [...calls, ...decisions] };
  },
  advance: (spec, reader, trigger): Advance => {
    const local = positionsToDecide(spec, reader, trigger).flatMap((p) => decide(spec, reader, p) ?? []);
    if (local.length > 0) return { ready: [], local };
    const items = reader.stage(ITEMS_STAGE);
    if (reader.open() > 0 || !items || items.completed < items.total) return { ready: [] };
    return { ready: [], end: { status: "completed", output: evaluationOutput(spec, reader.done(ITEMS_STAGE)), error: null } };
  },
  // The items stage makes no call (the operator finishes its tasks): the judge's call stands for it.
  work: (spec) => ({ kind: "call", tenantId: spec.tenantId, call: spec.call }),
  batchable: (_spec, stage) => stage !== ITEMS_STAGE,
  vars: (_spec, task) => {
    const item = task.input as EvalItem;
    if (task.stage === JUDGE_STAGE) return { item };
    const [a, b] = [answerOf(item.output, item.success, item.error), answerOf(item.b?.output, item.b?.success ?? false, item.b?.error ?? null)];
    return { item: { input: item.input, ...(task.stage === AB_STAGE ? { a, b } : { a: b, b: a }) } };
  },
  result: (_spec, task, finish) => {
    const item = task.input as EvalItem;
    if (task.stage !== ITEMS_STAGE) return { ...itemResult({ index: item.index, input: item.input }, finish), stage: task.stage };
    const verdict = (finish.output ?? {}) as ItemVerdict;
    return { index: item.index, success: true, ...verdict, ...("expected" in item ? { expected: item.expected, output: item.output } : {}) };
  },
  // The judge calls are what costs: the items are finished without one.
  estimateTasks: (_spec, plan) => ({ tasks: plan.tasks.filter((t) => t.stage !== ITEMS_STAGE).map((t) => ({ ...t, exact: true })), note: "" }),
  redoAfter: (spec, _reader, tasks) => ({
    // A judge call that failed is asked again; its item is decided again after it.
    rerun: tasks.filter((t) => judgeStages(spec).includes(t.stage)).map((t) => ({ stage: ITEMS_STAGE, index: t.index })),
    drop: [],
  }),
};

/** What a judge is shown of an answer: the output, or what went wrong. */
function answerOf(output: unknown, success: boolean, error: string | null): unknown {
  return success ? output : `(the task failed: ${error ?? "no answer"})`;
}
