/**
 * The task runner: every change of a task's state goes through the task machine
 * (../../src/engine/task-machine.ts) here, one event on one row, or set-wise through the store's
 * statements derived from the machine's own table (SET_WISE). The machine says what the task
 * becomes and which effects follow; this stores it, carries out the effects that are the task's
 * (a slot freed, a child started, the end recorded with its result: ./results.ts) and hands the
 * rest back as data (`Moved`) for the job to act on (JobRun.follow): what the operator says
 * follows, when to wake, a session to stop, a pause. It never calls back into the job.
 *
 * An attempt's outcome settles through one path whoever brought it — a call worker, an agent's
 * session or a line of a provider batch: priced at its mode's rate and spent against the budget
 * as it arrives (`spend`: the provider billed it, whatever the task does now), then the machine's
 * report (`settle`; for a spent quota, its withdraw and the job's pause).
 *
 * An event the machine refuses is either stale (a report, a hand or a loss for a dispatch that
 * moved on meanwhile: ignored) or a defect of the engine (a dispatch of a task that is not pending,
 * a local end of one under way): that is logged and counted in the job's meta (`defects`).
 */
import { taskTransition, type TaskEnd, type TaskEvent, type TaskPolicy, type TaskState } from "../../src/engine/task-machine";
import type { PauseReason } from "../../src/engine/job-machine";
import type { Advance, Operator } from "../../src/engine/types";
import { duplicatedCounts, NO_USAGE_SUMS, sumsOf, type UsageSums } from "../../src/engine/counters";
import type { AttemptOutcome } from "../../src/engine/retry-policy";
import { modelChain } from "../../src/engine/fallbacks";
import { workOf } from "../../src/engine/executors";
import { priced, type ExecutionMode } from "../../src/llm/prices";
import type { JobSpec } from "../../src/operators/registry";
import { stateOf, type CoordinatorStore, type TaskRow, type TaskWrite } from "./store";
import type { BudgetKeeper } from "./budget";
import type { JobLog } from "./job-log";
import { planReader } from "./claims";
import { recordEnd, type AttemptFacts } from "./results";
import { startChild } from "./subtasks";

/** How an attempt ran: at the realtime price, or as a line of a provider batch at the batch price. */
export type CallMode = "realtime" | "batch";

const NO_FACTS: AttemptFacts = { details: null, cached: null };

function attemptFacts(outcome: AttemptOutcome): AttemptFacts {
  return {
    details: outcome.kind === "success" || outcome.kind === "permanent" ? (outcome.details ?? null) : null,
    cached: outcome.kind === "success" ? (outcome.cached ?? null) : null,
    ...(outcome.serviceTier ? { serviceTier: outcome.serviceTier } : {}),
  };
}

/** The price an attempt's tokens are spent at: a realtime call OpenAI's flex tier served is at the batch rates (../../src/llm/prices.ts). */
const priceMode = (outcome: AttemptOutcome, mode: CallMode): ExecutionMode => (mode === "realtime" && outcome.serviceTier === "flex" ? "flex" : mode);

/** What an event leaves the job to do, as data: the job's interpreter (JobRun.follow) acts on it. */
export interface Moved {
  /** The task's state after the event. */
  task: TaskState;
  /** The task ended (its result is stored): what the operator says follows. */
  advance: Advance | null;
  /** The task is due again then: the job must wake by then. */
  wake: number | null;
  /** An agent's child sub-session started: its stage may have work now. */
  spawned: boolean;
  /** The task's session must stop (its task ended without its own report). */
  stopSession: string | null;
  /** The job must pause (the credential's quota is spent). */
  pause: PauseReason | null;
}

/** What the runner works on: the job's storage and log, its budget, its operator and (as a recover or resume may change it) its spec. */
export interface RunnerParts {
  readonly env: Env;
  readonly store: CoordinatorStore;
  readonly log: JobLog;
  readonly budget: BudgetKeeper;
  readonly op: Operator;
  readonly busySlots: Set<number>;
  spec(): JobSpec;
}

/** Events that may come for a dispatch that moved on meanwhile (a late report, a sweep that raced one): refused, they are stale, not defects. */
const MAY_BE_STALE: ReadonlySet<TaskEvent["type"]> = new Set(["report", "hand", "lost", "withdraw", "release", "due", "child-ended"]);

const policyOf = (spec: JobSpec): TaskPolicy => ({ maxRetries: spec.maxRetries, maxWaitMs: spec.maxWaitMs });

export class TaskRunner {
  #chains = new Map<string, string[]>(); // each stage's fallback chain, for the spec they were read from
  #chainsOf: JobSpec | null = null;

  constructor(private readonly job: RunnerParts) {}

  /** The models a stage's calls may use, its own first (an agent's children: their parents' stage's; ../../src/engine/fallbacks.ts). */
  chainOf(stage: string): string[] {
    const { op, store } = this.job;
    const spec = this.job.spec();
    if (this.#chainsOf !== spec) {
      this.#chains.clear();
      this.#chainsOf = spec; // a recover or resume replaces the spec: its chains are read again
    }
    let chain = this.#chains.get(stage);
    if (!chain) {
      // None for a stage whose tasks the operator finishes itself (a pipeline's step markers have no work).
      const work = workOf(op, spec, store.workStage(stage));
      this.#chains.set(stage, (chain = work ? modelChain(spec, work) : []));
    }
    return chain;
  }

  /** The model a task's calls go to now (its route along its stage's chain), which paces and prices them. */
  modelOf(task: Pick<TaskRow, "stage" | "route">): string {
    const chain = this.chainOf(task.stage);
    return chain[task.route] ?? (chain[0] as string);
  }

  /** The task of a dispatch while it is current (running with that token); null: its report would be stale. */
  dispatchOf(stage: string, idx: number, token: string): TaskRow | null {
    return this.job.store.runningTask(stage, idx, token) ?? null;
  }

  /**
   * One attempt's outcome, from a call worker, a session or a batch line, its usage spent already
   * (`spend`): the machine's report. A spent quota (not billed) withdraws the attempt and pauses
   * the job. Null: the task moved on.
   */
  settle(row: TaskRow, outcome: AttemptOutcome, usage: UsageSums, now: number, random: () => number): Moved | null {
    const facts = attemptFacts(outcome);
    const chain = this.chainOf(row.stage);
    if (chain.length > 1) facts.model = this.modelOf(row);
    if (outcome.kind === "permanent" && outcome.quota && row.route + 1 >= chain.length) {
      // The credential's quota is spent (contract v4): nothing will pass until someone pays. The
      // task waits as it was (its attempt not counted) and the job pauses until resume.
      const moved = this.apply(row, { type: "withdraw" });
      return moved && { ...moved, pause: "provider_quota" };
    }
    return this.apply(row, { type: "report", outcome, now, random }, usage, facts);
  }

  /**
   * A call the provider billed for an item that had (or was getting) its result another way
   * (execution mode auto: a cancelled batch's line that ran all the same, or a realtime call that
   * ended after the item's batch line): its usage apart, in `usage.duplicated`, its dollars in the job's.
   */
  billedForNothing(row: TaskRow, outcome: AttemptOutcome, mode: CallMode): boolean {
    const usage = this.spend(row, outcome, mode);
    if (usage.input_tokens + usage.output_tokens === 0) return false;
    this.job.log.bump(duplicatedCounts(usage));
    return true;
  }

  /** An attempt's usage, priced at its mode's rate and spent against the job's budget (and stage's). */
  spend(row: TaskRow, outcome: AttemptOutcome, mode: CallMode): UsageSums {
    if (outcome.kind === "spawn" && mode === "batch") throw new Error("a batch line cannot spawn a sub-session");
    const usage = sumsOf(priced(this.job.env, this.modelOf(row), outcome.usage, priceMode(outcome, mode)));
    this.job.budget.spend(row.stage, usage);
    return usage;
  }

  /**
   * Applies `event` to `row` (as read in this turn). `usage`: what the attempt spent, added to the
   * task; `write`: the tokens a dispatch reserves, a batch line's batch. Null when the event does
   * not apply (the task moved on meanwhile, or a defect: see the header).
   */
  apply(row: TaskRow, event: TaskEvent, usage: UsageSums = NO_USAGE_SUMS, facts: AttemptFacts = NO_FACTS, write: Omit<TaskWrite, "usage"> = {}): Moved | null {
    const { store, log } = this.job;
    const spec = this.job.spec();
    const transition = taskTransition(stateOf(row), event, { ...policyOf(spec), chain: Math.max(1, this.chainOf(row.stage).length) });
    if (!transition) {
      if (!MAY_BE_STALE.has(event.type)) this.#defect(row, event);
      return null;
    }
    const moved: Moved = { task: transition.task, advance: null, wake: null, spawned: false, stopSession: null, pause: null };
    const finish: { end: TaskEnd | null } = { end: null };
    const save = (): boolean => {
      if (transition.task.state !== "done" && !store.saveTask(row, transition.task, { ...write, usage })) return false;
      for (const effect of transition.effects) {
        if (effect.type === "free-slot") this.job.busySlots.delete(effect.slot);
        else if (effect.type === "wake") moved.wake = effect.at;
        else if (effect.type === "finish") finish.end = effect.end;
        else if (effect.type === "stop-session") moved.stopSession = row.session_id;
        else if (effect.type === "resent") log.bump({ total_attempts: 1, interrupted_calls: 1 });
        else {
          startChild(store, log, spec.jobId, row, effect.spawn);
          moved.spawned = true;
        }
      }
      // The dispatch's call was re-sent: each call interrupted before it sent the same prompt as this one.
      if (event.type === "report" && row.handed > 1) log.bump({ interrupted_input_tokens: (row.handed - 1) * usage.input_tokens });
      return true;
    };
    // One statement is atomic on its own (the hot path: a dispatch, a retry); a spawn writes the child too.
    const stored = transition.effects.some((e) => e.type === "spawn") ? store.transaction(save) : save();
    if (!stored) return null; // the row changed since it was read: stale
    if (finish.end) moved.advance = recordEnd({ spec, op: this.job.op, store, log, reader: planReader(store) }, row, transition.task, finish.end, usage, facts);
    return moved;
  }

  /** Defects the engine made in this object's life and before (the job's meta `defects`). */
  defects(): number {
    return this.job.store.getMeta("defects") ?? 0;
  }

  #defect(row: TaskRow, event: TaskEvent): void {
    console.error(`engine defect: the task machine refused ${event.type} for task ${row.stage}[${row.idx}] in state ${row.state}`);
    this.job.store.setMeta("defects", this.defects() + 1);
  }
}
