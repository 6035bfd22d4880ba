/**
 * Operators that judge each item with one model call (filter, classify), optionally behind a
 * **cascade**: a cheaper model answers every item first, with a confidence; an answer it is sure
 * enough of is the item's (decided by the cascade: no call of the job's model), the others go on
 * to the job's model. A cheaper call that failed decides nothing: its item goes on too.
 *
 * Stages: `cascade` (the cheaper model's calls; only with a cascade), then `items` — every item's
 * final answer, the job's model's or the cascade's taken as it is (a task the operator finishes
 * itself). With a cascade an `items` task's input is `{item, decided_by}`; its result says
 * `decided_by`. Recover re-runs what failed at either level, never a cheaper call whose item went
 * on to the job's model.
 */
import type { Advance, CallSpec, JobSpecBase, Operator, PlanReader, TaskFinish, TaskSeed, TaskView } from "../engine/types";
import { ITEMS_STAGE, itemResult, itemsPlan } from "./single-stage";

export const CASCADE_STAGE = "cascade";

export interface CascadeSpec {
  call: CallSpec;
  acceptAbove: number;
  rejectBelow: number | null;
}

export interface JudgeSpec extends JobSpecBase {
  call: CallSpec;
  cascade?: CascadeSpec | null;
}

export type DecidedBy = "cascade" | "model";
interface Envelope {
  item: unknown;
  decided_by: DecidedBy;
}

/** The cheaper model's answer as the item's (`{output}`), or null: the job's model decides. */
export type Verdict = { output: unknown } | null;

interface JudgeParts<S extends JudgeSpec> {
  type: string;
  /** What a cheaper model's answer decides (only called with a cascade). */
  decide(cascade: CascadeSpec, answer: unknown): Verdict;
  /** The job's output, from the `items` stage's finished tasks (their outputs as the items' answers). */
  output(spec: S, done: TaskView[]): Record<string, unknown>;
}

const unwrap = (spec: JudgeSpec, task: { stage: string; input: unknown }): { item: unknown; decidedBy: DecidedBy | null } => {
  if (!spec.cascade || task.stage !== ITEMS_STAGE) return { item: task.input, decidedBy: null };
  const envelope = task.input as Envelope;
  return { item: envelope.item, decidedBy: envelope.decided_by };
};

/** The `items` tasks the finished cheaper calls lead to: taken as they are (`local`) or passed on (`ready`). */
function decided<S extends JudgeSpec>(parts: JudgeParts<S>, cascade: CascadeSpec, reader: PlanReader, finished: TaskView[]): Advance {
  const ready: TaskSeed[] = [];
  const local: (TaskSeed & { output: unknown })[] = [];
  for (const task of finished) {
    if (reader.task(ITEMS_STAGE, task.index)) continue; // decided already (a recover's re-evaluation)
    const verdict = task.success ? parts.decide(cascade, task.output) : null;
    if (verdict) local.push({ stage: ITEMS_STAGE, index: task.index, input: { item: task.input, decided_by: "cascade" } satisfies Envelope, output: verdict.output });
    else ready.push({ stage: ITEMS_STAGE, index: task.index, input: { item: task.input, decided_by: "model" } satisfies Envelope });
  }
  return { ready, local };
}

export function judgeOperator<S extends JudgeSpec>(parts: JudgeParts<S>): Operator<S> {
  const end = (spec: S, reader: PlanReader): Advance => {
    const done = reader.done(ITEMS_STAGE);
    const output = parts.output(spec, done);
    if (spec.cascade) {
      const by: Record<DecidedBy, number> = { cascade: 0, model: 0 };
      for (const task of done) by[(task.input as Envelope).decided_by]++;
      output.decided_by = by;
    }
    return { ready: [], end: { status: "completed", output, error: null } };
  };
  return {
    v1: false,
    startedFields: { type: parts.type },
    mainStage: () => ITEMS_STAGE,
    plan: (spec, inputs) =>
      spec.cascade
        ? { stages: [{ name: CASCADE_STAGE, total: inputs.length }, { name: ITEMS_STAGE, total: inputs.length }], tasks: inputs.map((input, index) => ({ stage: CASCADE_STAGE, index, input })) }
        : itemsPlan(inputs),
    advance: (spec, reader, trigger) => {
      if (spec.cascade) {
        const finished = trigger === null ? reader.done(CASCADE_STAGE) : trigger.stage === CASCADE_STAGE ? [trigger] : [];
        const next = decided(parts, spec.cascade, reader, finished);
        if (next.ready.length > 0 || (next.local?.length ?? 0) > 0) return next;
      }
      const items = reader.stage(ITEMS_STAGE);
      return reader.open() === 0 && items !== undefined && items.completed >= items.total ? end(spec, reader) : { ready: [] };
    },
    work: (spec, stage) => ({ kind: "call", tenantId: spec.tenantId, call: stage === CASCADE_STAGE && spec.cascade ? spec.cascade.call : spec.call }),
    batchable: () => true, // the cheaper model's calls and the model's: each item's own
    vars: (spec, task) => ({ item: unwrap(spec, task).item }),
    result: (spec, task, finish: TaskFinish) => {
      const { item, decidedBy } = unwrap(spec, task);
      return { stage: task.stage, ...itemResult({ index: task.index, input: item }, finish), ...(decidedBy ? { decided_by: decidedBy } : {}) };
    },
    redoAfter: (_spec, reader, tasks) => ({
      rerun: [],
      drop: [],
      // A cheaper call that failed passed its item on: the job's model answered it (or failed, and re-runs).
      skip: tasks.filter((t) => t.stage === CASCADE_STAGE && reader.task(ITEMS_STAGE, t.index) !== undefined),
    }),
    // Every prompt is known before the job runs (the items themselves): each task is `exact`.
    estimateTasks: (spec, plan) => {
      const tasks = plan.tasks.map((t) => ({ ...t, exact: true }));
      if (!spec.cascade) return { tasks, note: "" };
      const passedOn = plan.tasks.map((t) => ({ stage: ITEMS_STAGE, index: t.index, input: { item: t.input, decided_by: "model" } satisfies Envelope, exact: true }));
      return { tasks: [...tasks, ...passedOn], note: "At most: every item passed on from the cascade to the job's model." };
    },
  };
}
