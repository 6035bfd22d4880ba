/**
 * A job's lifecycle, the runner of its state machine (../../src/engine/job-machine.ts): begin, a
 * pause when the budget cannot fit the next call, resume, the end (the operator's, a cancel's, a
 * budget's) and its finalization, recover. Each asks the machine first — a refused change is the
 * machine's reason — then stores the new status and applies the effects, with the events' data
 * that only the job knows. The coordinator's RPCs and the run call these.
 */
import { newId } from "../../src/lib/ids";
import { jobTransition, type EndStatus, type JobEffect, type JobEvent, type JobState, type JobStep, type PauseReason } from "../../src/engine/job-machine";
import type { Advance, JobStatus, Operator, PlanReader } from "../../src/engine/types";
import type { JobSpec } from "../../src/operators/registry";
import { withBudgetChange, withOverrides, type BudgetChange, type RecoverOptions, type RecoverAnswer, type ResumeAnswer } from "../../src/engine/recovery";
import type { BatchRunner } from "./batch-runner";
import type { BudgetKeeper } from "./budget";
import type { ConcurrencyLink } from "./concurrency";
import type { D1Mirror } from "./d1-mirror";
import type { EventHub } from "./event-hub";
import type { CompletedEvent } from "./job-meta";
import type { JobLog } from "./job-log";
import type { Pacings } from "./pacings";
import type { CoordinatorStore, TaskRow } from "./store";
import type { WorkerLink } from "./workers";
import { watchWebhook } from "./webhook-sweep";

export const SWEEP_INTERVAL_MS = 10_000; // how often a running job checks for lost work

/** What the lifecycle needs of its job (./job-run.ts). */
export interface LifecycleRun {
  readonly env: Env;
  spec: JobSpec;
  readonly op: Operator;
  readonly status: JobStatus;
  finalized: boolean;
  readonly store: CoordinatorStore;
  readonly batches: BatchRunner;
  readonly budget: BudgetKeeper;
  readonly busySlots: Set<number>;
  readonly log: JobLog;
  readonly mirror: D1Mirror;
  readonly concurrency: ConcurrencyLink;
  readonly pacing: Pacings;
  readonly workers: WorkerLink;
  readonly hub: EventHub;
  readonly waiters: (() => void)[];
  setStatus(status: JobStatus): void;
  readonly tracer: { ended(status: string, startedAt: number, now: number): void };
  round(): number;
  reader(): PlanReader;
  wake(at: number): void;
  clearAlarm(): Promise<void>;
  stopSession(sessionId: string): void;
  startStagesWithWork(): void;
  afterChange(advance: Advance | null): Promise<unknown>;
  dispatchAndSettle(): Promise<unknown>;
  joinLimits(spec: JobSpec, inFlight: number): Promise<void>;
}

const jobStateOf = (run: LifecycleRun): JobState => ({ status: run.status, finalized: run.finalized });

/** Event data only the job knows, by the machine's `emit` effects. */
type EmitData = Partial<Record<Extract<JobEffect, { type: "emit" }>["event"], Record<string, unknown>>>;

/**
 * Asks the machine; when the change is allowed, stores the new state with the effects that write,
 * in one transaction (`extra`: the caller's own writes of the change). Returns the machine's
 * answer; its effects that wait on the world are `act`'s, when the caller is ready for them.
 */
function commit(run: LifecycleRun, event: JobEvent, data: EmitData = {}, extra: () => void = () => {}): JobStep {
  const step = jobTransition(jobStateOf(run), event);
  if (!step.ok) return step;
  const spec = run.spec;
  run.store.transaction(() => {
    for (const effect of step.effects) {
      switch (effect.type) {
        case "emit":
          run.log.emit(effect.event, { job_id: spec.jobId, ...data[effect.event] });
          break;
        case "release-tasks":
          releaseTasks(run, effect.closeAs);
          break;
        case "count-results-attempts":
          run.log.bump({ total_attempts: run.store.doneAttempts() - run.log.counters.total_attempts });
          break;
        case "stamp-end":
          run.store.setMeta("completed_at", new Date().toISOString());
          break;
        case "new-round":
          run.store.setMeta("round", run.round() + 1);
          run.store.setMeta("completed_at", null);
          run.store.setMeta("error", null);
          run.store.setMeta("webhook_settled", false);
          break;
        default:
          break; // the world's: `act`, and `stopSpending` before the commit
      }
    }
    extra();
    if (step.job.finalized !== run.finalized) run.store.setMeta("finalized", step.job.finalized);
    run.finalized = step.job.finalized;
    if (step.job.status !== run.status) run.setStatus(step.job.status);
  });
  return step;
}

/** The effects of a committed change that wait on the world: dispatches, the operator's first tasks, leaving the shared objects. */
async function act(run: LifecycleRun, step: JobStep): Promise<void> {
  if (!step.ok) return;
  for (const effect of step.effects) {
    if (effect.type === "dispatch") await run.dispatchAndSettle();
    if (effect.type === "advance") {
      run.startStagesWithWork();
      await run.afterChange(run.op.advance(run.spec, run.reader(), null));
    }
    if (effect.type === "leave") await leave(run);
  }
}

/** Before an end is committed: sub-sessions under way stop after their current turn, and provider batches are cancelled, so an ended job spends no more tokens. */
async function stopSpending(run: LifecycleRun, step: JobStep): Promise<void> {
  if (!step.ok) return;
  for (const effect of step.effects) {
    if (effect.type !== "stop-spending") continue;
    for (const row of run.store.running()) if (row.session_id) run.stopSession(row.session_id);
    if (effect.cancelBatches) await run.batches.cancelOpen();
  }
}

/** The task machine's `release` for every running task (set-wise), and the stages closed. */
function releaseTasks(run: LifecycleRun, closeAs: "completed" | "failed"): void {
  run.busySlots.clear();
  run.store.releaseRunning(); // their reports are stale from now on; recover runs them again
  for (const stage of run.store.stages()) {
    if (stage.status === "running") run.store.setStageStatus(stage.name, closeAs);
    // A stage the plan sized at nothing (a rank without ties at its cut) never had work: skipped.
    else if (stage.status === "pending" && stage.total === 0 && closeAs === "completed") run.store.setStageStatus(stage.name, "skipped");
  }
}

/** The job leaves the shared objects and wakes whoever waits for its end; its webhook, and cancelled batches' late lines, are watched. */
async function leave(run: LifecycleRun): Promise<void> {
  const spec = run.spec;
  run.concurrency.leave(spec);
  run.pacing.leave(spec);
  await run.workers.release(spec, run.round());
  run.hub.closeAll();
  for (const resolve of run.waiters.splice(0)) resolve();
  await run.clearAlarm();
  const look = await watchWebhook(run);
  if (look !== null) run.wake(look);
  // Batches cancelled before the end are read as they end: what the provider billed for nothing (./batch-runner.ts).
  const poll = run.spec.execution ? run.store.batches.nextPollAt() : null;
  if (poll !== null) run.wake(poll);
}

/** The job starts: MAP_STARTED with its planned stages, then what the operator says comes first. */
export async function beginJob(run: LifecycleRun): Promise<void> {
  const spec = run.spec;
  const planned = run.store.stages().map((s) => ({ name: s.name, total: s.total }));
  const total = planned.reduce((n, s) => n + s.total, 0);
  const started = { total, model: spec.model, ...run.op.startedFields, ...run.log.shape.startedFields(planned) };
  const step = commit(run, { type: "begin" }, { MAP_STARTED: started }, () => run.store.setMeta("started_at_ms", Date.now()));
  run.mirror.schedule();
  await act(run, step);
}

/** The next call does not fit the budget and the job pauses (`on_exhausted: pause`) until a resume or a cancel. Synchronous: the dispatch that found it stops at once. */
export function pauseJob(run: LifecycleRun, reason: PauseReason = "budget_exhausted"): void {
  const budget = run.budget.view(run.spec.budget);
  commit(run, { type: "pause", reason }, { JOB_PAUSED: { reason, budget } }, () => run.store.setMeta("pause_reason", reason));
  run.mirror.schedule();
}

/** A cancel: the job ends `cancelled` unless it has ended already (false). */
export async function cancelJob(run: LifecycleRun): Promise<boolean> {
  if (!jobTransition(jobStateOf(run), { type: "end", status: "cancelled" }).ok) return false;
  await finishJob(run, "cancelled");
  return true;
}

/**
 * The job ends with `status` (a job ended already goes on with its finalization): nothing more is
 * spent, what was running is released, the stages closed, D1 flushed, then MAP_COMPLETED once, the
 * shared objects left, waiters woken, its webhook delivered and watched until it settles.
 */
export async function finishJob(run: LifecycleRun, status: JobStatus): Promise<void> {
  if (status === "completed" || status === "failed" || status === "cancelled") {
    await stopSpending(run, jobTransition(jobStateOf(run), { type: "end", status }));
    commit(run, { type: "end", status: status satisfies EndStatus }); // refused when the job has ended already: its finalization goes on
  }
  try {
    await run.mirror.flush();
  } catch (err) {
    console.error("final flush failed; the alarm retries", err);
    run.wake(Date.now() + 1_000);
    return;
  }
  const staged = run.log.shape.showsOutput ? { output: run.store.getMeta("output") ?? null, error: run.store.getMeta("error") ?? null } : {};
  const data = { status: run.status, total: run.log.total(), ...run.log.summary(), ...staged };
  const completedAt = run.store.getMeta("completed_at") ?? new Date().toISOString();
  const completed: CompletedEvent = { completedAt, data: { job_id: run.spec.jobId, ...data }, round: run.round() };
  if (!run.finalized) run.tracer.ended(run.status, run.store.getMeta("started_at_ms") ?? Date.parse(completedAt), Date.parse(completedAt)); // its spans go out, never awaited
  await act(
    run,
    commit(run, { type: "finalize" }, { MAP_COMPLETED: data }, () => run.store.setMeta("completed_event", completed)),
  );
}

/** Re-runs the failed and unfinished tasks of an ended job, keeping every finished one. */
export async function recoverJob(run: LifecycleRun, options: RecoverOptions): Promise<RecoverAnswer> {
  const { spec, op, store } = run;
  const allowed = jobTransition(jobStateOf(run), { type: "recover" });
  if (!allowed.ok) return { ok: false, reason: allowed.reason };
  const candidates = store.recoverable(options.errorKinds);
  const redo = op.redoAfter?.(
    spec,
    run.reader(),
    candidates.map((r) => ({ stage: r.stage, index: r.idx })),
  ) ?? { rerun: [], drop: [] };
  const skipped = new Set((redo.skip ?? []).map((t) => `${t.stage}:${t.index}`));
  const rows = candidates.filter((r) => !skipped.has(`${r.stage}:${r.idx}`));
  if (rows.length === 0) return { ok: false, reason: "The job has no failed or unfinished task to re-run." };
  const listed = new Set(rows.map((r) => `${r.stage}:${r.idx}`));
  const rerun = redo.rerun
    .filter((t) => !listed.has(`${t.stage}:${t.index}`))
    .map((t) => store.task(t.stage, t.index))
    .filter((t): t is TaskRow => t !== undefined);
  const updated = withOverrides(spec, options);
  const step = commit(run, { type: "recover" }, { JOB_RECOVERING: { tasks: rows.length } }, () => {
    const reopened = store.reopen(rows, rerun, () => newId("ses")); // the task machine's `reset`, set-wise
    const dropped = redo.drop.map((stage) => store.dropStage(stage));
    const succeeded = reopened.succeeded + dropped.reduce((n, d) => n + d.succeeded, 0);
    const failed = reopened.failed + dropped.reduce((n, d) => n + d.failed, 0);
    run.log.bump({ completed: -(succeeded + failed), succeeded: -succeeded, failed: -failed });
    if (redo.drop.length > 0) store.setMeta("d1_drop_stages", redo.drop); // their stored results go too
    store.setMeta("spec", updated);
    run.spec = updated;
  });
  run.budget.respec();
  if (updated.model !== spec.model) {
    // Another model, perhaps another provider's: its credential's pacer and adaptive limit, not the old model's.
    await run.joinLimits(updated, run.busySlots.size);
  }
  await run.workers.lease(updated, run.round()); // before the first dispatch of the new round
  await act(run, step);
  await run.mirror.flush(); // D1 says `running` before the caller hears 202
  return { ok: true, recovering: rows.length + rerun.length };
}

/** A paused job goes on, with new budget limits if given. */
export async function resumeJob(run: LifecycleRun, change: BudgetChange | null): Promise<ResumeAnswer> {
  const spec = run.spec;
  const allowed = jobTransition(jobStateOf(run), { type: "resume" });
  if (!allowed.ok) return { ok: false, reason: allowed.reason };
  const budget = spec.budget ? withBudgetChange(spec.budget, change) : null;
  const view = run.budget.view(budget);
  if (budget && view) {
    // A limit at or below what is spent would pause the job again at once: say so, with the numbers.
    const { spent, reserved } = view;
    if (budget.total !== null && budget.total <= spent + reserved) {
      const message = `token_budget.total ${budget.total} is not above what the job has spent (${spent} tokens${reserved > 0 ? `, ${reserved} reserved` : ""}); resume with a total above ${spent + reserved}.`;
      return { ok: false, reason: `The job cannot go on: ${message}`, details: [{ path: "token_budget.total", message }] };
    }
    if (view.usd && view.usd.limit <= view.usd.spent + view.usd.reserved) {
      const used = view.usd.spent + view.usd.reserved;
      const message = `token_budget.usd ${view.usd.limit} is not above what the job has spent ($${view.usd.spent}${view.usd.reserved > 0 ? `, $${view.usd.reserved} reserved` : ""}); resume with usd above ${used}.`;
      return { ok: false, reason: `The job cannot go on: ${message}`, details: [{ path: "token_budget.usd", message }] };
    }
  }
  const step = commit(run, { type: "resume" }, {}, () => {
    run.store.setMeta("pause_reason", null);
    if (change && spec.budget && budget) {
      const updated: JobSpec = { ...spec, budget };
      run.store.setMeta("spec", updated);
      run.spec = updated;
    }
  });
  await act(run, step);
  run.wake(Date.now() + SWEEP_INTERVAL_MS);
  await run.mirror.flush(); // D1 says `running` before the caller hears 202
  return { ok: true };
}
