/**
 * The runner of the task state machine (../../src/engine/task-machine.ts): one event applied to one
 * task row — the machine says what the task becomes and what follows, this stores it and carries
 * the effects out. A task that ends is stored with its result, its event and its counters in one
 * transaction (./results.ts); every other transition with what it starts (an agent's child).
 */
import { taskTransition, type TaskEnd, type TaskEvent, type TaskPolicy, type TaskState } from "../../src/engine/task-machine";
import type { Advance, JobSpecBase } from "../../src/engine/types";
import { NO_USAGE_SUMS, type UsageSums } from "../../src/engine/counters";
import type { AttemptOutcome } from "../../src/engine/retry-policy";
import { stateOf, type CoordinatorStore, type TaskRow, type TaskWrite } from "./store";
import type { JobLog } from "./job-log";
import { startChild } from "./subtasks";

const policyOf = (spec: JobSpecBase): TaskPolicy => ({ maxRetries: spec.maxRetries, maxWaitMs: spec.maxWaitMs });

/** What a step writes besides the machine's facts and the attempt's usage: the tokens a dispatch reserves, a batch line's batch. */
export type StepWrite = Omit<TaskWrite, "usage">;

/** What an attempt's result keeps besides its end: the executor's details, and what a cached answer's original call cost. */
export interface AttemptFacts {
  details: Record<string, unknown> | null;
  cached: { input_tokens: number; output_tokens: number } | null;
}

const NO_FACTS: AttemptFacts = { details: null, cached: null };

export function attemptFacts(outcome: AttemptOutcome): AttemptFacts {
  return {
    details: outcome.kind === "success" || outcome.kind === "permanent" ? (outcome.details ?? null) : null,
    cached: outcome.kind === "success" ? (outcome.cached ?? null) : null,
  };
}

/** What the runner needs of its job. */
export interface StepHost {
  readonly spec: JobSpecBase;
  readonly store: CoordinatorStore;
  readonly log: JobLog;
  readonly busySlots: Set<number>;
  stopSession(sessionId: string): void;
  /** Stores a task's end (`done`: the state it ends in) and its result; returns what the operator says follows. */
  record(task: TaskRow, done: TaskState, end: TaskEnd, usage: UsageSums, facts: AttemptFacts): Advance;
}

/** What a step did: the task's new state, what the operator says follows its end, when it is due again, whether it spawned a child. */
export interface Stepped {
  task: TaskState;
  advance: Advance | null;
  wake: number | null;
  spawned: boolean;
}

/**
 * Applies `event` to `row` (as read in this turn). `usage`: what the attempt reported spent, added
 * to the task; `write`: the tokens a dispatch reserves, a batch line's batch. Null when the event
 * does not apply (the task moved on meanwhile).
 */
export function stepTask(host: StepHost, row: TaskRow, event: TaskEvent, usage: UsageSums = NO_USAGE_SUMS, facts: AttemptFacts = NO_FACTS, write: StepWrite = {}): Stepped | null {
  const transition = taskTransition(stateOf(row), event, policyOf(host.spec));
  if (!transition) return null;
  const stepped: Stepped = { task: transition.task, advance: null, wake: null, spawned: false };
  const finish: { end: TaskEnd | null } = { end: null };
  const { store } = host;
  const apply = (): boolean => {
    if (transition.task.state !== "done" && !store.saveTask(row, transition.task, { ...write, usage })) return false;
    for (const effect of transition.effects) {
      switch (effect.type) {
        case "free-slot":
          host.busySlots.delete(effect.slot);
          break;
        case "wake":
          stepped.wake = effect.at;
          break;
        case "spawn":
          startChild(store, host.log, host.spec.jobId, row, effect.spawn);
          stepped.spawned = true;
          break;
        case "stop-session":
          if (row.session_id) host.stopSession(row.session_id);
          break;
        case "finish":
          finish.end = effect.end;
          break;
        case "resent":
          host.log.bump({ total_attempts: 1, interrupted_calls: 1 });
          break;
      }
    }
    // The dispatch's call was re-sent: each call interrupted before it sent the same prompt as this one.
    if (event.type === "report" && row.handed > 1) host.log.bump({ interrupted_input_tokens: (row.handed - 1) * usage.input_tokens });
    return true;
  };
  // One statement is atomic on its own (the hot path: a dispatch, a retry); a spawn writes the child too.
  const stored = transition.effects.some((e) => e.type === "spawn") ? store.transaction(apply) : apply();
  if (!stored) return null;
  if (finish.end) stepped.advance = host.record(row, transition.task, finish.end, usage, facts);
  return stepped;
}
