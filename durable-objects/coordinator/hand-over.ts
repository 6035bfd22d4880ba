/**
 * A call worker takes its running dispatch: its claim after a `begin`, or a pulled task handed
 * again (the task machine's `hand`, ../../src/engine/task-machine.ts). A dispatch taken a second
 * time was never reported the first time — its worker restarted mid-call (or the answer handing it
 * over was lost) — so its call goes again as one more attempt, and the job's usage counts it as
 * interrupted (the provider may have billed the first). A task out of attempts, or lost too often,
 * ends there instead, and the worker runs nothing.
 */
import type { PulledTask, TaskRef } from "../../src/engine/types";
import type { JobRun } from "./job-run";
import type { TaskRow } from "./store";

/**
 * Whether the worker may run the task's call now (false: the task moved on or ended). A session's
 * claims are its turns' and are not counted here; nor is a hand the worker says never reached it
 * (`counted` false: the answer that carried it was lost, the worker did not restart).
 */
export async function handOver(run: JobRun, row: TaskRow, counted = true): Promise<boolean> {
  if (row.session_id || row.slot === null || !counted) return true;
  const moved = run.tasks.apply(row, { type: "hand", why: "its worker restarted while its call was under way", now: Date.now() });
  if (!moved) return false;
  if (moved.task.state === "running") return true;
  await run.follow(moved);
  return false;
}

/**
 * The call task running on `slot` this round, handed again to the slot's worker: it reported
 * again a task that was settled already, so it never got the answer that handed it this one (a
 * lost connection, or a restart before the task was stored with its outcome). A slot is one
 * object per round, so no other worker holds the task. Null when the job is not under way, the
 * report is from an earlier round, nothing runs on the slot, or the task ended on this hand.
 * `counted`: whether the task may have been under way (see handOver).
 */
export async function slotTask(run: JobRun, slot: number, round: number, counted: boolean): Promise<PulledTask | null> {
  if ((run.status !== "running" && run.status !== "paused") || round !== run.round()) return null;
  const row = run.store.runningOn(slot);
  if (!row?.token || !(await handOver(run, row, counted))) return null;
  const current = run.store.task(row.stage, row.idx) ?? row;
  const ref: TaskRef = { jobId: run.spec.jobId, stage: row.stage, index: row.idx, attempt: current.attempts, token: row.token, slot, sessionId: null, round };
  if (row.route > 0) ref.route = row.route;
  const work = run.work(row.stage, row.route);
  if (work.kind === "call" && work.call.serviceTier) ref.tier = work.call.serviceTier;
  return { ref, claim: run.claimOf(current), setup: null };
}
