/**
 * The map-reduce operator's plan. Stages, in order: `map` (one mapper call per batch of
 * documents) → `shuffle` (no model call: finished by the operator itself, ./shuffle.ts) →
 * `reduce` (sized once the shuffle knows the groups, ./levels.ts) → `synthesis` (optional).
 * - A failed mapper batch fails the job at the end of the map stage (`map_failures: fail`), or is
 *   left out (`continue`: its documents are listed in the audit).
 * - Reduce tasks of level ≥ 1 and synthesis wait (blocked) for their inputs; each is released
 *   with those outputs as its input, so a worker never reads another task's output itself.
 * - A failed reduce or synthesis task fails the job; `recover` goes on from it.
 */
import type { Advance, CallSpec, JobSpecBase, Operator, PlanReader, TaskResult, TaskSeed, TaskView } from "../../engine/types";
import { extractionsOf } from "../../engine/attempt";
import { outputBound } from "../../engine/estimate";
import { MAX_REDUCE_CALLS, stageTooLarge } from "../../engine/limits";
import { taskResultBase } from "../../engine/task-result";
import { childrenOf, levels, locate, parentOf, topIndex, type Levels, type Strategy } from "./levels";
import { shuffle, type Group, type MapperOutput, type ShuffleOptions, type Tagged } from "./shuffle";

export interface MapReduceJobSpec extends JobSpecBase {
  type: "map_reduce";
  mapper: CallSpec;
  reducer: CallSpec;
  synthesis: CallSpec | null;
  documents: number;
  docsPerMapper: number;
  strategy: Strategy;
  fanIn: number;
  shuffle: ShuffleOptions;
  mapFailures: "fail" | "continue";
}

export const MAP = "map";
export const SHUFFLE = "shuffle";
export const REDUCE = "reduce";
export const SYNTHESIS = "synthesis";

interface BatchInput {
  documents: unknown[];
  indices: number[];
}

/** A reduce task's input: level 0 holds its groups; a higher level, once released, its inputs' outputs. */
interface ReduceInput {
  level: number;
  key: string | null;
  groups: Record<string, Tagged[]> | null;
  items: unknown[] | null;
  sources: number[];
  inputs: number[];
}

interface ShuffleSummary {
  documents: number;
  groups: string[];
  extractions: number;
  merged: number;
  left_out: number[];
  missing_dedupe_fields?: string[]; // present when some dedupe_fields were in no extraction
}

const union = (lists: number[][]): number[] => [...new Set(lists.flat())].sort((a, b) => a - b);

function shapeOf(spec: MapReduceJobSpec, reader: PlanReader): Levels | null {
  const summary = reader.task(SHUFFLE, 0)?.output as ShuffleSummary | null | undefined;
  return summary ? levels(spec.strategy, summary.groups.length, spec.fanIn) : null;
}

/** The map stage is over: fail (with `map_failures: fail` and a failed batch) or shuffle and seed the reduce stage. */
function afterMap(spec: MapReduceJobSpec, reader: PlanReader): Advance {
  const batches = reader.done(MAP);
  const failed = batches.filter((b) => !b.success);
  if (failed.length > 0 && spec.mapFailures === "fail") {
    const first = failed[0] as TaskView;
    const message = `${failed.length} mapper batch(es) failed; first (batch ${first.index}): ${first.error ?? "failed"}`;
    return { ready: [], end: { status: "failed", output: null, error: { code: "task_failed", message, stage: MAP, index: first.index, step: null } } };
  }
  const outputs: MapperOutput[] = batches
    .filter((b) => b.success)
    .map((b) => ({ documents: (b.input as BatchInput).indices, extractions: extractionsOf(b.output) ?? [] }));
  const shuffled = shuffle(outputs, spec.shuffle);
  const leftOut = failed.flatMap((b) => (b.input as BatchInput).indices).sort((a, b) => a - b);
  const summary: ShuffleSummary = {
    documents: spec.documents,
    groups: shuffled.groups.map((g) => g.key),
    extractions: shuffled.extractions,
    merged: shuffled.merged,
    left_out: leftOut,
  };
  if (shuffled.missingDedupeFields.length > 0) summary.missing_dedupe_fields = shuffled.missingDedupeFields;
  const shape = levels(spec.strategy, shuffled.groups.length, spec.fanIn);
  const local = [{ stage: SHUFFLE, index: 0, input: null, output: summary }];
  if (shape.total > MAX_REDUCE_CALLS) {
    const what = `The shuffle made ${shuffled.groups.length} groups: the reduce stage's calls (${spec.strategy})`;
    return { ready: [], local, end: { status: "failed", output: null, error: stageTooLarge(REDUCE, shape.total, MAX_REDUCE_CALLS, what) } };
  }
  const ready = reduceSeeds(spec, shuffled.groups, shape);
  if (shape.total === 0) return { local, totals: { [REDUCE]: 0 }, ...finalValue(spec, []) };
  return { ready, local, totals: { [REDUCE]: shape.total } };
}

function reduceSeeds(spec: MapReduceJobSpec, groups: Group[], shape: Levels): TaskSeed[] {
  const level0: Group[][] = spec.strategy === "flat" ? [groups] : spec.strategy === "category" ? groups.map((g) => [g]) : chunk(groups, spec.fanIn);
  const seeds: TaskSeed[] = level0.map((part, i) => {
    const input: ReduceInput = {
      level: 0,
      key: spec.strategy === "flat" || part.length !== 1 ? null : (part[0] as Group).key,
      groups: Object.fromEntries(part.map((g) => [g.key, g.extractions])),
      items: part.flatMap((g) => g.extractions),
      sources: union(part.flatMap((g) => g.extractions.map((e) => e.sources))),
      inputs: [],
    };
    return { stage: REDUCE, index: i, input };
  });
  for (let index = level0.length; index < shape.total; index++) {
    const input: ReduceInput = {
      level: locate(shape, index).level,
      key: null,
      groups: null,
      items: null,
      sources: [],
      inputs: childrenOf(shape, index, spec.fanIn),
    };
    seeds.push({ stage: REDUCE, index, input, blocked: true });
  }
  return seeds;
}

function chunk<T>(list: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out.length ? out : [[]];
}

/** The reduce stage's final value: on to synthesis, or the job's output. */
function finalValue(spec: MapReduceJobSpec, results: unknown): Pick<Advance, "ready" | "end"> {
  if (spec.synthesis) return { ready: [{ stage: SYNTHESIS, index: 0, input: { results } }] };
  return { ready: [], end: { status: "completed", output: results, error: null } };
}

function afterReduce(spec: MapReduceJobSpec, reader: PlanReader, trigger: TaskView): Advance {
  const shape = shapeOf(spec, reader) as Levels;
  if (spec.strategy === "category") {
    const stage = reader.stage(REDUCE);
    if (!stage || stage.completed < stage.total) return { ready: [] };
    const results = reader.done(REDUCE).map((t) => ({ key: (t.input as ReduceInput).key, output: t.output }));
    return finalValue(spec, results);
  }
  if (trigger.index === topIndex(shape)) return finalValue(spec, trigger.output);
  const parent = parentOf(shape, trigger.index, spec.fanIn);
  return { ready: parent === null ? [] : release(spec, reader, shape, parent) };
}

/** A level ≥ 1 task, made ready once every input below it has succeeded. */
function release(spec: MapReduceJobSpec, reader: PlanReader, shape: Levels, index: number): TaskSeed[] {
  const task = reader.task(REDUCE, index);
  if (task?.state !== "blocked") return [];
  const children = childrenOf(shape, index, spec.fanIn).map((i) => reader.task(REDUCE, i));
  if (!children.every((c) => c?.state === "done" && c.success)) return [];
  const input: ReduceInput = {
    level: locate(shape, index).level,
    key: null,
    groups: null,
    items: children.map((c) => (c as TaskView).output),
    sources: union(children.map((c) => ((c as TaskView).input as ReduceInput).sources)),
    inputs: children.map((c) => (c as TaskView).index),
  };
  return [{ stage: REDUCE, index, input }];
}

function advance(spec: MapReduceJobSpec, reader: PlanReader, trigger: TaskView | null): Advance {
  if (trigger && trigger.success === false && trigger.stage !== MAP) {
    const key = trigger.stage === REDUCE ? (trigger.input as ReduceInput).key : null;
    return {
      ready: [],
      end: {
        status: "failed",
        output: null,
        error: { code: "task_failed", message: trigger.error ?? "the task failed", stage: trigger.stage, index: trigger.index, step: key },
      },
    };
  }
  if (trigger?.stage === REDUCE) return afterReduce(spec, reader, trigger);
  if (trigger?.stage === SYNTHESIS) return { ready: [], end: { status: "completed", output: trigger.output, error: null } };
  if (trigger?.stage === SHUFFLE) return { ready: [] };
  // A map batch finished, or everything is re-evaluated (start, recover): is the map stage over?
  const map = reader.stage(MAP);
  const shuffled = reader.task(SHUFFLE, 0)?.state === "done";
  if (!map || map.completed < map.total || shuffled) return recoverFrontier(spec, reader);
  return afterMap(spec, reader);
}

/** After a recover past the shuffle: blocked reduce tasks whose inputs are all there, and synthesis. */
function recoverFrontier(spec: MapReduceJobSpec, reader: PlanReader): Advance {
  const shape = shapeOf(spec, reader);
  if (!shape) return { ready: [] };
  const ready: TaskSeed[] = [];
  for (let index = shape.sizes[0] as number; index < shape.total; index++) ready.push(...release(spec, reader, shape, index));
  return { ready };
}

const mapVars = (spec: MapReduceJobSpec, input: BatchInput) => ({
  items: input.documents,
  indices: input.indices,
  ...(spec.docsPerMapper === 1 ? { item: input.documents[0] } : {}),
});

export const mapReduceOperator: Operator<MapReduceJobSpec> = {
  v1: false,
  startedFields: { type: "map_reduce" },
  mainStage: () => MAP,
  plan: (spec, inputs) => {
    const batches = chunk(
      inputs.map((value, i) => ({ value, i })),
      spec.docsPerMapper,
    );
    const tasks: TaskSeed[] = batches.map((part, index) => ({
      stage: MAP,
      index,
      input: { documents: part.map((p) => p.value), indices: part.map((p) => p.i) },
    }));
    tasks.push({ stage: SHUFFLE, index: 0, input: null, blocked: true });
    if (spec.synthesis) tasks.push({ stage: SYNTHESIS, index: 0, input: null, blocked: true });
    return {
      stages: [
        { name: MAP, total: batches.length },
        { name: SHUFFLE, total: 1 },
        { name: REDUCE, total: 0 },
        { name: SYNTHESIS, total: spec.synthesis ? 1 : 0, skipped: !spec.synthesis },
      ],
      tasks,
    };
  },
  advance,
  work: (spec, stage) => ({
    kind: "call",
    tenantId: spec.tenantId,
    call: stage === MAP ? spec.mapper : stage === SYNTHESIS && spec.synthesis ? spec.synthesis : spec.reducer,
  }),
  batchable: (_spec, stage) => stage === MAP, // the mappers; the reduce levels and the synthesis wait on each other
  vars: (spec, task) => {
    if (task.stage === MAP) return mapVars(spec, task.input as BatchInput);
    if (task.stage === SYNTHESIS) return { results: (task.input as { results: unknown }).results };
    const r = task.input as ReduceInput;
    return { items: r.items ?? [], key: r.key, level: r.level, groups: r.groups, total_documents: r.sources.length };
  },
  // A continue-mode job that already reduced: re-running its failed batches redoes the shuffle, the
  // reduce (planned anew: the groups may change) and the synthesis, with every batch's extractions.
  redoAfter: (spec, reader, tasks) =>
    reader.task(SHUFFLE, 0)?.state === "done" && tasks.some((t) => t.stage === MAP)
      ? { rerun: [{ stage: SHUFFLE, index: 0 }, ...(spec.synthesis ? [{ stage: SYNTHESIS, index: 0 }] : [])], drop: [REDUCE] }
      : { rerun: [], drop: [] },
  estimateTasks: (spec, plan) => {
    // The reduce stage is sized by the shuffle: assume one group per mapper batch.
    const maps = plan.tasks.filter((t) => t.stage === MAP).map((t) => ({ ...t, exact: true })); // rendered as they will run
    const shape = levels(spec.strategy, maps.length, spec.fanIn);
    const mapOut = maps.length * outputBound(spec.mapper.maxTokens);
    const reduceOut = outputBound(spec.reducer.maxTokens);
    const level0 = shape.sizes[0] ?? 0;
    const reduce = Array.from({ length: shape.total }, (_, index) => {
      const level = locate(shape, index).level;
      // Level 0 holds its share of the mappers' outputs; a higher level, up to fan_in reducer outputs.
      const bound = level === 0 ? Math.ceil(mapOut / Math.max(1, level0)) : Math.min(spec.fanIn, shape.sizes[level - 1] ?? 1) * reduceOut;
      return { stage: REDUCE, index, input: { bound } };
    });
    const synthesisBound = spec.strategy === "category" ? shape.total * reduceOut : reduceOut;
    const synthesis = spec.synthesis ? [{ stage: SYNTHESIS, index: 0, input: { bound: synthesisBound } }] : [];
    return {
      tasks: [...maps, ...reduce, ...synthesis],
      note: `reduce calls assume one group per mapper batch (the shuffle decides; past ${MAX_REDUCE_CALLS} reduce calls the job fails with stage_too_large before any reducer runs)`,
    };
  },
  estimateVars: (spec, task) => {
    // Reduce and synthesis prompts hold outputs of earlier stages: bounded by those stages' max_tokens.
    if (task.stage === MAP) return { vars: mapVars(spec, task.input as BatchInput), boundTokens: 0 };
    const bound = (task.input as { bound?: number } | null)?.bound ?? outputBound(spec.mapper.maxTokens);
    return { vars: { items: [], key: null, level: 0, groups: {}, total_documents: spec.documents, results: [] }, boundTokens: bound };
  },
  result: (_spec, task, finish): TaskResult => {
    const base = taskResultBase(task, finish);
    if (task.stage === MAP) return { ...base, documents: (task.input as BatchInput).indices, extractions: extractionsOf(finish.output)?.length ?? 0 };
    if (task.stage !== REDUCE) return base;
    const r = task.input as ReduceInput;
    return { ...base, level: r.level, key: r.key, sources: r.sources, inputs: r.inputs };
  },
};
