/**
 * A provider batch's lines as the job counts them (./batch-runner.ts): each line's outcome settled
 * like a report (the same task machine), at the batch price, with no slot and no pacing to tell; and what the provider
 * billed for nothing (execution mode auto) counted apart.
 */
import { duplicatedCounts, sumsOf, type UsageSums } from "../../src/engine/counters";
import type { AttemptOutcome } from "../../src/engine/retry-policy";
import type { TaskEvent } from "../../src/engine/task-machine";
import { attemptFacts, type AttemptFacts, type Stepped } from "./task-steps";
import type { Advance } from "../../src/engine/types";
import type { JobSpec } from "../../src/operators/registry";
import { priced } from "../../src/llm/prices";
import type { BudgetKeeper } from "./budget";
import type { D1Mirror } from "./d1-mirror";
import type { JobLog } from "./job-log";
import type { CoordinatorStore, TaskRow } from "./store";

/** What settling a line needs of its job (./job-run.ts). */
interface SettlingJob {
  readonly env: Env;
  readonly store: CoordinatorStore;
  readonly log: JobLog;
  readonly mirror: D1Mirror;
  readonly budget: BudgetKeeper;
  readonly spec: JobSpec;
  modelOf(stage: string): string;
  step(task: TaskRow, event: TaskEvent, usage?: UsageSums, facts?: AttemptFacts): Stepped | null;
  afterChange(advance: Advance): Promise<void>;
  wakeAt(time: number): Promise<void>;
}

/** One line of a provider batch ended: the task machine's step, its usage at the batch price. */
export async function settleLine(job: SettlingJob, task: TaskRow, outcome: AttemptOutcome): Promise<void> {
  if (outcome.kind === "spawn") throw new Error("a batch line cannot spawn a sub-session");
  const usage = sumsOf(priced(job.env, job.modelOf(task.stage), outcome.usage, "batch"));
  job.budget.spend(task.stage, usage);
  const now = Date.now();
  // No jitter: a batch's lines that go again wait the same backoff, and go out in one later batch.
  const moved = job.step(task, { type: "report", outcome, now, random: () => 0 }, usage, attemptFacts(outcome));
  if (!moved) return;
  if (moved.advance) return job.afterChange(moved.advance);
  // Into a later batch: the alarm submits it once its backoff is over.
  await job.wakeAt(moved.wake ?? now);
}

/**
 * A call the provider billed for an item that had (or was getting) its result another way
 * (execution mode auto: a cancelled batch's line that ran all the same, or a realtime call that
 * ended after the item's batch line): its usage apart, in `usage.duplicated`, its dollars in the job's.
 */
export function duplicated(job: SettlingJob, task: TaskRow, outcome: AttemptOutcome, mode: "batch" | "realtime"): void {
  const usage = sumsOf(priced(job.env, job.modelOf(task.stage), outcome.usage, mode));
  if (usage.input_tokens + usage.output_tokens === 0) return;
  job.budget.spend(task.stage, usage);
  job.log.bump(duplicatedCounts(usage));
  job.mirror.schedule();
}
