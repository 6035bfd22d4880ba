/**
 * Agent subtasks in the coordinator: a task whose agent asked for a child sub-session waits
 * (state `child`, no slot held: a job whose every slot is a waiting parent cannot deadlock) while
 * the child runs as a task of its stage's children stage (`<stage>.subtasks`; it counts towards the job's concurrency like
 * any sub-session). When the child ends, its parent is pending again and its session, dispatched
 * anew, reads the child's result from the child's own object and goes on.
 *
 * A child's task input is `{parent: {stage, index}, spawn}`. Children are not items: they add
 * to the job's tokens and to their stage's counts, not to the job's `total`/`completed`.
 */
import type { SubtaskSpawn, TaskResult, TaskSeed } from "../../src/engine/types";
import type { TaskFinish } from "../../src/engine/types";
import type { JobLog } from "./job-log";
import type { CoordinatorStore, TaskRow } from "./store";

export interface ChildInput {
  parent: { stage: string; index: number };
  spawn: SubtaskSpawn;
}

export const childInput = (input: unknown): ChildInput | null =>
  typeof input === "object" && input !== null && "spawn" in input && "parent" in input ? (input as ChildInput) : null;

/** The child's task, next in `stage` (its parent's children stage). */
export function childSeed(stage: string, parent: { stage: string; idx: number }, spawn: SubtaskSpawn, index: number): TaskSeed {
  const input: ChildInput = { parent: { stage: parent.stage, index: parent.idx }, spawn };
  return { stage, index, input, sessionId: spawn.sessionId, priority: 0 };
}

/**
 * An agent asked for a child sub-session: its task waits without a slot (the machine's `child`,
 * stored already), and the child is made ready, next in the subtasks stage (made on first use), to
 * be dispatched like any task.
 */
export function startChild(store: CoordinatorStore, log: JobLog, jobId: string, parent: TaskRow, spawn: SubtaskSpawn): void {
  store.transaction(() => {
    log.bump({ total_attempts: -1 }); // the parent's attempt goes on when it is dispatched again (its tokens count when it ends)
    const stage = store.childStage(parent.stage);
    const index = store.stage(stage)?.total ?? 0;
    store.setStageTotal(stage, index + 1);
    store.makeReady(childSeed(stage, parent, spawn, index));
    log.emit("SUBTASK_STARTED", { job_id: jobId, stage, index, session_id: spawn.sessionId, parent_session_id: spawn.parentSessionId, depth: spawn.depth });
  });
}

/** A child's result row (under `?stage=<stage>.subtasks`): its session, its parent's, its depth. */
export function childResult(index: number, input: ChildInput, finish: TaskFinish): TaskResult {
  return {
    index,
    session_id: finish.sessionId,
    parent_session_id: input.spawn.parentSessionId,
    depth: input.spawn.depth,
    output_text: "",
    ...finish.details,
    success: finish.success,
    error: finish.error,
    error_kind: finish.errorKind,
    attempts: finish.attempts,
    usage: finish.usage,
    cost_usd: finish.costUsd,
  };
}
