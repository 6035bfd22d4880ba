/**
 * A job's lifecycle after its start, besides the run's own end (JobRun.finish): recover (an ended
 * job's failed and unfinished tasks run again, its finished ones kept) and resume (a paused job
 * goes on). The coordinator's RPCs call these with the job's run.
 */
import { newId } from "../../src/lib/ids";
import { isTerminal } from "../../src/engine/types";
import type { JobSpec } from "../../src/operators/registry";
import { withBudgetChange, withOverrides, type BudgetChange, type RecoverOptions, type RecoverAnswer, type ResumeAnswer } from "../../src/engine/recovery";
import type { TaskRow } from "./store";
import { SWEEP_INTERVAL_MS, type JobRun } from "./job-run";

/** Re-runs the failed and unfinished tasks of an ended job, keeping every finished one. */
export async function recoverJob(run: JobRun, options: RecoverOptions): Promise<RecoverAnswer> {
  const { spec, op, store } = run;
  if (!isTerminal(run.status) || !run.finalized) return { ok: false, reason: "The job is still running or paused; only an ended job can be recovered." };
  const candidates = store.recoverable(options.errorKinds);
  const redo = op.redoAfter?.(spec, run.reader(), candidates.map((r) => ({ stage: r.stage, index: r.idx }))) ?? { rerun: [], drop: [] };
  const skipped = new Set((redo.skip ?? []).map((t) => `${t.stage}:${t.index}`));
  const rows = candidates.filter((r) => !skipped.has(`${r.stage}:${r.idx}`));
  if (rows.length === 0) return { ok: false, reason: "The job has no failed or unfinished task to re-run." };
  const listed = new Set(rows.map((r) => `${r.stage}:${r.idx}`));
  const rerun = redo.rerun
    .filter((t) => !listed.has(`${t.stage}:${t.index}`))
    .map((t) => store.task(t.stage, t.index))
    .filter((t): t is TaskRow => t !== undefined);
  const updated = withOverrides(spec, options);
  store.transaction(() => {
    const reopened = store.reopen(rows, rerun, () => newId("ses"));
    const dropped = redo.drop.map((stage) => store.dropStage(stage));
    const succeeded = reopened.succeeded + dropped.reduce((n, d) => n + d.succeeded, 0);
    const failed = reopened.failed + dropped.reduce((n, d) => n + d.failed, 0);
    run.log.bump({ completed: -(succeeded + failed), succeeded: -succeeded, failed: -failed });
    if (redo.drop.length > 0) store.setMeta("d1_drop_stages", redo.drop); // their stored results go too
    store.setMeta("spec", updated);
    store.setMeta("round", run.round() + 1);
    store.setMeta("completed_at", null);
    store.setMeta("error", null);
    store.setMeta("finalized", false);
    store.setMeta("webhook_settled", false);
    run.setStatus("running");
    run.log.emit("JOB_RECOVERING", { job_id: spec.jobId, tasks: rows.length });
  });
  run.spec = updated;
  run.finalized = false;
  run.budget.respec();
  if (updated.model !== spec.model) {
    // Another model, perhaps another provider's: its credential's pacer and adaptive limit, not the old model's.
    await run.joinLimits(updated, run.busySlots.size);
  }
  await run.workers.lease(updated, run.round()); // before the first dispatch of the new round
  run.startStagesWithWork();
  await run.afterChange(op.advance(updated, run.reader(), null));
  await run.mirror.flush(); // D1 says `running` before the caller hears 202
  return { ok: true, recovering: rows.length + rerun.length };
}

/** A paused job goes on, with new budget limits if given. */
export async function resumeJob(run: JobRun, change: BudgetChange | null): Promise<ResumeAnswer> {
  const spec = run.spec;
  if (run.status !== "paused") return { ok: false, reason: `The job is ${run.status}, not paused.` };
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
  if (change && spec.budget && budget) {
    const updated: JobSpec = { ...spec, budget };
    run.store.setMeta("spec", updated);
    run.spec = updated;
  }
  run.store.transaction(() => {
    run.setStatus("running");
    run.store.setMeta("pause_reason", null);
    run.log.emit("JOB_RESUMED", { job_id: spec.jobId });
  });
  await run.dispatchAndSettle();
  await run.wakeAt(Date.now() + SWEEP_INTERVAL_MS);
  await run.mirror.flush(); // D1 says `running` before the caller hears 202
  return { ok: true };
}
