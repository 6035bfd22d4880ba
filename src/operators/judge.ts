/**
 * Operators that judge each item with one model call (filter, classify), optionally behind a
 * **cascade**: a cheaper model answers every item first, with a confidence; an answer it is sure
 * enough of is the item's (decided by the cascade: no call of the job's model), the others go on
 * to the job's model. A cheaper call that failed decides nothing: its item goes on too.
 *
 * Stages: `cascade` (the cheaper model's calls; only with a cascade), `sample` (with a target: the
 * job's model on a seeded sample, ./cascade-learned.ts), then `items` — every item's final answer,
 * the job's model's or the cascade's (or the sample's) taken as it is (a task the operator
 * finishes itself). With a cascade an `items` task's input is `{item, decided_by}`; its result
 * says `decided_by`. Fixed thresholds decide each item as its cheaper call ends; a target decides
 * every item once both the cheaper calls and the sample are done. Recover re-runs what failed at
 * any level, never a cheaper or sampled call whose item went on to the job's model.
 */
import type { Advance, CallSpec, JobSpecBase, Operator, PlanReader, TaskFinish, TaskSeed, TaskView } from "../engine/types";
import type { CascadeTarget, Thresholds } from "../engine/cascade-target";
import { ITEMS_STAGE, itemResult, itemsPlan } from "./single-stage";
import { cascadeOutput, learnedFrom, SAMPLE_STAGE, sampleTasks, type LearnedState, type TargetParts } from "./cascade-learned";

export const CASCADE_STAGE = "cascade";

/** Fixed thresholds (null: never), or a target whose thresholds are learned (both null until then). */
export interface CascadeSpec extends Thresholds {
  call: CallSpec;
  target?: CascadeTarget | null;
}

export interface JudgeSpec extends JobSpecBase {
  call: CallSpec;
  cascade?: CascadeSpec | null;
}

export type DecidedBy = "cascade" | "model" | "sample";
interface Envelope {
  item: unknown;
  decided_by: DecidedBy;
}

/** The cheaper model's answer as the item's (`{output}`), or null: the job's model decides. */
export type Verdict = { output: unknown } | null;

interface JudgeParts<S extends JudgeSpec> extends TargetParts {
  type: string;
  /** What a cheaper model's answer decides under thresholds (only called with a cascade). */
  decide(thresholds: Thresholds, answer: unknown): Verdict;
  /** The job's output, from the `items` stage's finished tasks (their outputs as the items' answers). */
  output(spec: S, done: TaskView[]): Record<string, unknown>;
}

const unwrap = (spec: JudgeSpec, task: { stage: string; input: unknown }): { item: unknown; decidedBy: DecidedBy | null } => {
  if (!spec.cascade || task.stage !== ITEMS_STAGE) return { item: task.input, decidedBy: null };
  const envelope = task.input as Envelope;
  return { item: envelope.item, decidedBy: envelope.decided_by };
};

/** The `items` tasks the finished cheaper calls lead to: taken as they are (`local`) or passed on (`ready`); a sampled item takes the oracle's answer. */
function decided<S extends JudgeSpec>(
  parts: JudgeParts<S>,
  thresholds: Thresholds,
  reader: PlanReader,
  finished: TaskView[],
  sampled?: Map<number, TaskView>,
): Advance {
  const ready: TaskSeed[] = [];
  const local: (TaskSeed & { output: unknown })[] = [];
  for (const task of finished) {
    if (reader.task(ITEMS_STAGE, task.index)) continue; // decided already (a recover's re-evaluation)
    const oracle = sampled?.get(task.index);
    if (oracle?.success) {
      local.push({ stage: ITEMS_STAGE, index: task.index, input: { item: task.input, decided_by: "sample" } satisfies Envelope, output: oracle.output });
      continue;
    }
    const verdict = task.success && !oracle ? parts.decide(thresholds, task.output) : null;
    if (verdict)
      local.push({ stage: ITEMS_STAGE, index: task.index, input: { item: task.input, decided_by: "cascade" } satisfies Envelope, output: verdict.output });
    else ready.push({ stage: ITEMS_STAGE, index: task.index, input: { item: task.input, decided_by: "model" } satisfies Envelope });
  }
  return { ready, local };
}

/** A target's decisions: none until the thresholds are learned, then every item's at once (a trigger of the `items` stage decides nothing). */
function decidedByTarget<S extends JudgeSpec>(parts: JudgeParts<S>, target: CascadeTarget, reader: PlanReader, trigger: TaskView | null): Advance {
  if (trigger?.stage === ITEMS_STAGE) return { ready: [] };
  const state = learnedFrom(parts, target, reader, CASCADE_STAGE);
  return state ? decided(parts, state.thresholds, reader, [...state.cheap.values()], state.oracle) : { ready: [] };
}

export function judgeOperator<S extends JudgeSpec>(parts: JudgeParts<S>): Operator<S> {
  const end = (spec: S, reader: PlanReader): Advance => {
    const done = reader.done(ITEMS_STAGE);
    const output = parts.output(spec, done);
    if (spec.cascade) {
      const by: Record<DecidedBy, number> = { cascade: 0, model: 0, sample: 0 };
      for (const task of done) by[(task.input as Envelope).decided_by]++;
      const target = spec.cascade.target;
      const state: LearnedState | null = target ? learnedFrom(parts, target, reader, CASCADE_STAGE) : null;
      if (target && state) output.cascade = cascadeOutput(state, target, by.model);
      else delete (by as Partial<Record<DecidedBy, number>>).sample; // fixed thresholds: no sample
      output.decided_by = by;
    }
    return { ready: [], end: { status: "completed", output, error: null } };
  };
  return {
    v1: false,
    startedFields: { type: parts.type },
    mainStage: () => ITEMS_STAGE,
    plan: (spec, inputs) => {
      if (!spec.cascade) return itemsPlan(inputs);
      const cheaper: TaskSeed[] = inputs.map((input, index) => ({ stage: CASCADE_STAGE, index, input }));
      const target = spec.cascade.target;
      if (!target)
        return {
          stages: [
            { name: CASCADE_STAGE, total: inputs.length },
            { name: ITEMS_STAGE, total: inputs.length },
          ],
          tasks: cheaper,
        };
      const sample = sampleTasks(target, inputs);
      const stages = [
        { name: CASCADE_STAGE, total: inputs.length },
        { name: SAMPLE_STAGE, total: sample.length },
        { name: ITEMS_STAGE, total: inputs.length },
      ];
      return { stages, tasks: [...cheaper, ...sample] };
    },
    advance: (spec, reader, trigger) => {
      if (spec.cascade) {
        const target = spec.cascade.target;
        const finished = trigger === null ? reader.done(CASCADE_STAGE) : trigger.stage === CASCADE_STAGE ? [trigger] : [];
        const next = target ? decidedByTarget(parts, target, reader, trigger) : decided(parts, spec.cascade, reader, finished);
        if (next.ready.length > 0 || (next.local?.length ?? 0) > 0) return next;
      }
      const items = reader.stage(ITEMS_STAGE);
      return reader.open() === 0 && items !== undefined && items.completed >= items.total ? end(spec, reader) : { ready: [] };
    },
    work: (spec, stage) => ({
      kind: "call",
      tenantId: spec.tenantId,
      call: stage === CASCADE_STAGE && spec.cascade ? spec.cascade.call : spec.call,
      // The sample is the guarantee's ground truth: the job's model answers it, or nobody does.
      ...(stage === SAMPLE_STAGE ? { oneModel: true as const } : {}),
    }),
    batchable: () => true, // the cheaper model's calls and the model's: each item's own
    vars: (spec, task) => ({ item: unwrap(spec, task).item }),
    result: (spec, task, finish: TaskFinish) => {
      const { item, decidedBy } = unwrap(spec, task);
      return { stage: task.stage, ...itemResult({ index: task.index, input: item }, finish), ...(decidedBy ? { decided_by: decidedBy } : {}) };
    },
    redoAfter: (_spec, reader, tasks) => ({
      rerun: [],
      drop: [],
      // A cheaper or sampled call that failed passed its item on: the job's model answered it (or failed, and re-runs).
      skip: tasks.filter((t) => (t.stage === CASCADE_STAGE || t.stage === SAMPLE_STAGE) && reader.task(ITEMS_STAGE, t.index) !== undefined),
    }),
    // Every prompt is known before the job runs (the items themselves): each task is `exact`.
    estimateTasks: (spec, plan) => {
      const tasks = plan.tasks.map((t) => ({ ...t, exact: true }));
      if (!spec.cascade) return { tasks, note: "" };
      const sampled = new Set(plan.tasks.filter((t) => t.stage === SAMPLE_STAGE).map((t) => t.index));
      const cheaper = plan.tasks.filter((t) => t.stage === CASCADE_STAGE);
      const passedOn = cheaper
        .filter((t) => !sampled.has(t.index))
        .map((t) => ({ stage: ITEMS_STAGE, index: t.index, input: { item: t.input, decided_by: "model" } satisfies Envelope, exact: true }));
      const note = spec.cascade.target
        ? `At most: the job's model answers the ${sampled.size} sampled items and every other item the learned thresholds pass on (all of them when none meets the target).`
        : "At most: every item passed on from the cascade to the job's model.";
      return { tasks: [...tasks, ...passedOn], note };
    },
  };
}
