/**
 * An ordered fold as a sub-plan, under any two stage names: the reduce operator's whole plan and
 * a pipeline's reduce step. One task per entry in the `reduction` stage, strictly in order, and
 * optionally one per entry in the `inner` stage before it (no dependency between them, so they run
 * ahead in parallel). Reduction k is released once inner k and reduction k−1 have succeeded; its
 * input then holds the accumulator and the current result. Reductions are the critical path, so
 * they are dispatched before any inner task waiting for a slot.
 *
 * (Map-reduce's reduce levels are a tree, not a fold: a task of level l waits for its fan-in of
 * level l−1, in no order among them — ../map-reduce/levels.ts.)
 */
import type { PlanReader, TaskResult, TaskSeed, TaskView } from "../engine/types";

/** Where a fold's tasks are: `inner` is null when the fold has no inner call (the entry itself is the current result). */
export interface FoldStages {
  inner: string | null;
  reduction: string;
}

/** A fold task's stored input: the entry's name and value; a released reduction adds the fold's values. */
export interface FoldEntry {
  name: string;
  original_input: unknown;
  accumulator?: unknown;
  current_result?: unknown;
}

export const CRITICAL = 0; // reductions first
export const AHEAD = 1; // inner tasks fill the slots reductions leave

/** Named inputs (an object, in key order) or a list; each entry's name is its key or its index. */
export function entries(inputs: unknown[] | Record<string, unknown>): { name: string; value: unknown }[] {
  return Array.isArray(inputs) ? inputs.map((value, i) => ({ name: String(i), value })) : Object.entries(inputs).map(([name, value]) => ({ name, value }));
}

/** Every task of the fold: the inner tasks ready, the reductions blocked until their inputs are there. */
export function foldTasks(stages: FoldStages, list: { name: string; value: unknown }[]): TaskSeed[] {
  return list.flatMap(({ name, value }, index) => {
    const entry: FoldEntry = { name, original_input: value };
    const reduction: TaskSeed = { stage: stages.reduction, index, input: entry, blocked: true, priority: CRITICAL };
    return stages.inner ? [{ stage: stages.inner, index, input: entry, priority: AHEAD }, reduction] : [reduction];
  });
}

/** Reduction k, made ready if it is blocked and its inputs are there. */
export function releaseReduction(stages: FoldStages, initialValue: unknown, reader: PlanReader, k: number): TaskSeed[] {
  const task = reader.task(stages.reduction, k);
  if (!task || task.state !== "blocked") return [];
  const entry = task.input as FoldEntry;
  let current: unknown = entry.original_input;
  if (stages.inner) {
    const inner = reader.task(stages.inner, k);
    if (inner?.state !== "done" || !inner.success) return [];
    current = inner.output;
  }
  let accumulator = initialValue;
  if (k > 0) {
    const previous = reader.task(stages.reduction, k - 1);
    if (previous?.state !== "done" || !previous.success) return [];
    accumulator = previous.output;
  }
  const input: FoldEntry = { name: entry.name, original_input: entry.original_input, accumulator, current_result: current };
  return [{ stage: stages.reduction, index: k, input, priority: CRITICAL }];
}

/** The first reduction not done with success (`total` when every one is). */
export function firstUnreduced(stages: FoldStages, reader: PlanReader, total: number): number {
  for (let i = 0; i < total; i++) {
    const r = reader.task(stages.reduction, i);
    if (!(r?.state === "done" && r.success)) return i;
  }
  return total;
}

/** The last accumulator reached (the initial value before any). */
export function lastAccumulator(stages: FoldStages, initialValue: unknown, reader: PlanReader, total: number): unknown {
  for (let i = total - 1; i >= 0; i--) {
    const r = reader.task(stages.reduction, i);
    if (r?.state === "done" && r.success) return r.output;
  }
  return initialValue;
}

/** A fold task's template variables: an inner task's `item`; a reduction's accumulator and current result. */
export function foldVars(inner: boolean, task: Pick<TaskView, "index" | "input">): Record<string, unknown> {
  const entry = task.input as FoldEntry;
  if (inner) return { item: entry.original_input, name: entry.name, index: task.index };
  return { accumulator: entry.accumulator, current_result: entry.current_result, original_input: entry.original_input, name: entry.name, index: task.index };
}

/** A fold task's result: its entry's name; a reduction's accumulator after it (the one before, when it failed). */
export function foldResult(inner: boolean, task: Pick<TaskView, "input">, base: TaskResult, output: { success: boolean; output: unknown }): TaskResult {
  const entry = task.input as FoldEntry;
  return inner ? { ...base, name: entry.name } : { ...base, name: entry.name, accumulator: output.success ? output.output : (entry.accumulator ?? null) };
}
