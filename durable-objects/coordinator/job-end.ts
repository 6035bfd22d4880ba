/**
 * A job's end (the run's own, a cancel's, a budget's): sub-sessions stopped and provider batches
 * cancelled so nothing more is spent, what was running released, the stages closed, D1 flushed,
 * MAP_COMPLETED once, the shared objects left, waiters woken; then its webhook delivered and
 * watched until it settles, and cancelled batches' late lines read (./batch-runner.ts).
 */
import { isTerminal, type JobStatus } from "../../src/engine/types";
import type { JobSpec } from "../../src/operators/registry";
import type { BatchRunner } from "./batch-runner";
import type { ConcurrencyLink } from "./concurrency";
import type { D1Mirror } from "./d1-mirror";
import type { EventHub } from "./event-hub";
import type { CompletedEvent } from "./job-meta";
import type { JobLog } from "./job-log";
import type { Pacings } from "./pacings";
import type { CoordinatorStore } from "./store";
import type { WorkerLink } from "./workers";
import { sweepWebhook } from "./webhook-sweep";

/** What the end needs of its job (./job-run.ts). */
export interface EndingRun {
  readonly env: Env;
  readonly spec: JobSpec;
  readonly status: JobStatus;
  finalized: boolean;
  readonly store: CoordinatorStore;
  readonly batches: BatchRunner;
  readonly busySlots: Set<number>;
  readonly log: JobLog;
  readonly mirror: D1Mirror;
  readonly concurrency: ConcurrencyLink;
  readonly pacing: Pacings;
  readonly workers: WorkerLink;
  readonly hub: EventHub;
  readonly waiters: (() => void)[];
  setStatus(status: JobStatus): void;
  round(): number;
  wakeAt(time: number): Promise<void>;
  clearAlarm(): Promise<void>;
  stopSession(sessionId: string): void;
}

export async function finishJob(run: EndingRun, status: JobStatus): Promise<void> {
  const spec = run.spec;
  if (!isTerminal(run.status)) {
    // Sub-sessions under way stop after their current turn, and provider batches are cancelled, so an ended job spends no more tokens.
    for (const row of run.store.running()) if (row.session_id) run.stopSession(row.session_id);
    if (status !== "completed") await run.batches.cancelOpen();
    run.busySlots.clear();
    run.store.transaction(() => {
      run.store.releaseRunning(); // their reports are stale from now on; recover runs them again
      for (const stage of run.store.stages()) {
        if (stage.status === "running") run.store.setStageStatus(stage.name, status === "completed" ? "completed" : "failed");
        // A stage the plan sized at nothing (a rank without ties at its cut) never had work: skipped.
        else if (stage.status === "pending" && stage.total === 0 && status === "completed") run.store.setStageStatus(stage.name, "skipped");
      }
      // Attempts still under way produce no result: the job's count is that of its results.
      if (status === "cancelled") run.log.bump({ total_attempts: run.store.doneAttempts() - run.log.counters.total_attempts });
      run.setStatus(status);
      run.store.setMeta("completed_at", new Date().toISOString());
    });
  }
  try {
    await run.mirror.flush();
  } catch (err) {
    console.error("final flush failed; the alarm retries", err);
    await run.wakeAt(Date.now() + 1_000);
    return;
  }
  if (run.finalized) return;
  run.finalized = true;
  run.store.transaction(() => {
    const staged = run.log.shape.showsOutput ? { output: run.store.getMeta("output") ?? null, error: run.store.getMeta("error") ?? null } : {};
    const data = { job_id: spec.jobId, status: run.status, total: run.log.total(), ...run.log.summary(), ...staged };
    const completed: CompletedEvent = { completedAt: run.store.getMeta("completed_at") ?? new Date().toISOString(), data, round: run.store.getMeta("round") ?? 1 };
    run.store.setMeta("finalized", true);
    run.store.setMeta("completed_event", completed);
    run.log.emit("MAP_COMPLETED", data);
  });
  run.concurrency.leave(spec);
  run.pacing.leave(spec);
  await run.workers.release(spec, run.round());
  run.hub.closeAll();
  for (const resolve of run.waiters.splice(0)) resolve();
  await run.clearAlarm();
  await watchWebhook(run);
  // Batches cancelled before the end are read as they end: what the provider billed for nothing (./batch-runner.ts).
  const poll = run.spec.execution ? run.store.batches.nextPollAt() : null;
  if (poll !== null) await run.wakeAt(poll);
}

/** After the end: deliver MAP_COMPLETED to the job's webhook, and watch it until it settles. */
export async function watchWebhook(run: EndingRun): Promise<void> {
  const spec = run.spec;
  const completed = run.store.getMeta("completed_event");
  if (!spec.webhook || !completed || run.store.getMeta("webhook_settled")) return;
  try {
    const next = await sweepWebhook(run.env, run.store, { jobId: spec.jobId, tenantId: spec.tenantId, url: spec.webhook.url }, completed);
    if (next === null) run.store.setMeta("webhook_settled", true);
    else await run.wakeAt(next);
  } catch (err) {
    console.error("webhook sweep failed; retrying", err);
    await run.wakeAt(Date.now() + 5_000);
  }
}
