/**
 * Waiting on the rate pacer counts toward the job's max wait (contract v3): while a model's pacer
 * has granted the job nothing for longer than `max_wait_secs` (a provider's retry-after blocking
 * the credential, or the key's leases all taken), the job's pending tasks on that model fail
 * `rate_limited` where they wait, without another call (the task machine's give-up) — or, where
 * their stage has a fallback chain, go to the next model (its `fall-back`). The same for a model
 * whose circuit has been open longer than that (./circuits.ts: outages in a row, no answer since):
 * its waiting items fail `unavailable`, or fall back. At most GIVE_UP_PER_ALARM a turn; answers
 * whether there may be more (the job wakes again at once).
 */
import { DEFAULT_MAX_WAIT_SECS } from "../../src/engine/limits";
import { executorOf } from "../../src/engine/executors";
import { isTerminal, type ErrorKind, type JobStatus, type Operator } from "../../src/engine/types";
import type { JobSpec } from "../../src/operators/registry";
import type { CoordinatorStore, TaskRow } from "./store";

/** What the sweep needs of its job (./job-run.ts). */
export interface StarvedJob {
  readonly spec: JobSpec;
  readonly op: Operator;
  readonly store: CoordinatorStore;
  readonly status: JobStatus;
  readonly pacing: { starved(now: number, maxWaitMs: number): Set<string> };
  readonly circuits: { downLongerThan(now: number, maxWaitMs: number): Set<string> };
  batchStages(): string[];
  giveUp(row: TaskRow, error: string, errorKind: ErrorKind): Promise<void>;
  readonly tasks: { modelOf(task: TaskRow): string; chainOf(stage: string): string[]; apply(row: TaskRow, event: { type: "fall-back" }): unknown };
}

const GIVE_UP_PER_ALARM = 200;

export async function giveUpStarved(run: StarvedJob, now: number): Promise<boolean> {
  const maxWaitMs = run.spec.maxWaitMs ?? DEFAULT_MAX_WAIT_SECS * 1000;
  const starved = run.pacing.starved(now, maxWaitMs);
  const down = run.circuits.downLongerThan(now, maxWaitMs);
  if (starved.size === 0 && down.size === 0) return false;
  const rows = run.store.nextPending(GIVE_UP_PER_ALARM, run.batchStages());
  const secs = maxWaitMs / 1000;
  const limited = `Waited over the job's max_wait_secs (${secs}) for the provider's rate limits: the rate pacer granted no call in that time.`;
  const unavailable = `Waited over the job's max_wait_secs (${secs}) for the model to come back: it answered outages in a row, and nothing since.`;
  for (const row of rows) {
    const work = run.op.work(run.spec, run.store.workStage(row.stage));
    const model = run.tasks.modelOf(row);
    const isDown = down.has(model);
    if (!executorOf(work).paced || (!isDown && !starved.has(model))) continue;
    // A model that grants nothing, or is down, is unavailable to its items: those with a fallback go to it.
    if (row.route + 1 < run.tasks.chainOf(row.stage).length) run.tasks.apply(row, { type: "fall-back" });
    else await run.giveUp(row, isDown ? unavailable : limited, isDown ? "unavailable" : "rate_limited");
    if (isTerminal(run.status)) return false;
  }
  return rows.length === GIVE_UP_PER_ALARM;
}
