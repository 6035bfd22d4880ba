/**
 * A task's end, stored: the task row, its result in the outbox (copied to D1 by the mirror), its
 * event, the counters and its stage's, all in one transaction; then the operator says what
 * follows. A child sub-session's end is kept apart (not an item) and lets its parent go on.
 */
import type { Advance, Operator, PlanReader, TaskFinish, TaskView } from "../../src/engine/types";
import type { TaskEnd, TaskState } from "../../src/engine/task-machine";
import type { JobSpec } from "../../src/operators/registry";
import { cachedCounts, costOut, usageOut, type UsageSums } from "../../src/engine/counters";
import { taskSums } from "./store";
import { childInput, childResult, type ChildInput } from "./subtasks";
import type { CoordinatorStore, StageRow, TaskRow } from "./store";
import type { JobLog } from "./job-log";

/** What an attempt's result keeps besides its end: the executor's details, and what a cached answer's original call cost. */
export interface AttemptFacts {
  details: Record<string, unknown> | null;
  cached: { input_tokens: number; output_tokens: number } | null;
  /** The model that answered, where the task's stage has a fallback chain (its result says it). */
  model?: string;
  /** The tier that served the attempt, where the provider says (OpenAI's `service_tier`) or flex was asked for. */
  serviceTier?: string;
}

export interface JobParts {
  spec: JobSpec;
  op: Operator;
  store: CoordinatorStore;
  log: JobLog;
  reader: PlanReader;
}

/** Stores a finished task (an attempt's, or one the operator finished itself) and its result; returns what follows. */
export function recordEnd(
  job: JobParts,
  task: TaskRow,
  done: TaskState,
  end: TaskEnd,
  attemptUsage: UsageSums,
  { details, cached, model, serviceTier }: AttemptFacts,
): Advance {
  const child = job.store.isChildren(task.stage) ? childInput(JSON.parse(task.input)) : null;
  if (child) return recordChild(job, task, done, child, end, attemptUsage, details);
  const { spec, op, store, log } = job;
  const success = end.success;
  return store.transaction(() => {
    const row = store.markDone(task, done, attemptUsage, end);
    const usage = taskSums(row);
    // The output as the worker sent it (plain JSON values): the same as the stored text, without parsing it back.
    const view: TaskView = {
      stage: row.stage,
      index: row.idx,
      state: "done",
      success,
      output: end.output ?? null,
      input: JSON.parse(row.input) as unknown,
      error: row.error,
    };
    const result = op.result(spec, view, finishOf(row, usage, end, details));
    if (cached) result.cached = true;
    if (serviceTier) result.service_tier = serviceTier;
    if (model) {
      result.model = model; // the model of its fallback chain that answered (or was the last tried)
      if (success) store.setMetaSoon("answered", countOne(store.getMeta("answered") ?? {}, model));
    }
    log.bump({ completed: 1, succeeded: success ? 1 : 0, failed: success ? 0 : 1, seq: 1, ...usage, ...cachedCounts(cached) });
    const counts = store.countStageDone(row.stage, success, usage);
    // Serialised once and stored once: in its event, which the outbox's row points at for D1.
    const eventId = log.taskCompleted({ jobId: spec.jobId, stage: row.stage, index: row.idx, success }, JSON.stringify(result));
    store.outbox.add(row.stage, result, log.counters.seq, eventId);
    if (counts.completed === counts.total) {
      log.stageCompleted(spec.jobId, store.stage(row.stage) as StageRow);
      store.setStageStatus(row.stage, "completed");
    }
    return op.advance(spec, job.reader, view);
  });
}

/** A child ended: its result is kept (not counted as an item) and its parent can go on. */
function recordChild(
  job: JobParts,
  task: TaskRow,
  done: TaskState,
  child: ChildInput,
  end: TaskEnd,
  attemptUsage: UsageSums,
  details: Record<string, unknown> | null,
): Advance {
  const { spec, store, log } = job;
  store.transaction(() => {
    const row = store.markDone(task, done, attemptUsage, end);
    const usage = taskSums(row);
    const result = childResult(row.idx, child, finishOf(row, usage, end, details));
    log.bump({ seq: 1, ...usage });
    store.countStageDone(row.stage, end.success, usage);
    const fields = { job_id: spec.jobId, stage: row.stage, index: row.idx, success: end.success };
    const eventId = log.emitWithResult("SUBTASK_COMPLETED", fields, JSON.stringify(result));
    store.outbox.add(row.stage, result, log.counters.seq, eventId);
    store.resumeParent(child.parent.stage, child.parent.index);
  });
  return { ready: [] };
}

/** The items each model of a chain answered, with one more for `model`. */
function countOne(answered: Record<string, number>, model: string): Record<string, number> {
  return { ...answered, [model]: (answered[model] ?? 0) + 1 };
}

/** A finished task as its operator's result is made from it: `row` as stored with its end, `usage` its sums (taskSums of it). */
function finishOf(row: TaskRow, usage: UsageSums, end: TaskEnd, details: Record<string, unknown> | null): TaskFinish {
  return {
    success: end.success,
    output: end.output ?? null,
    error: row.error,
    errorKind: end.errorKind,
    attempts: row.attempts,
    usage: usageOut(usage),
    costUsd: costOut(usage),
    details,
    sessionId: row.session_id,
  };
}
