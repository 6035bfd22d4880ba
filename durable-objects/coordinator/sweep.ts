/**
 * The coordinator's alarm turn (./job-run.ts): the job's start; while it runs, its sweep for
 * dispatches that never reported, due retries, tasks starved by their rate pacer, provider batches
 * to poll or submit, then a dispatch; after its end, its finalization, webhook and the late lines
 * of batches it cancelled. Answers when the job must wake next (null: nothing to wake for).
 */
import { executorOf, isBatchLine } from "../../src/engine/executors";
import { isTerminal } from "../../src/engine/types";
import type { JobRun } from "./job-run";
import { SWEEP_INTERVAL_MS } from "./lifecycle";
import { giveUpStarved } from "./starved";
import { watchWebhook } from "./webhook-sweep";

export async function sweepJob(run: JobRun): Promise<number | null> {
  if (run.status === "queued") await run.begin();
  if (isTerminal(run.status)) return afterEnd(run);
  const now = Date.now();
  for (const row of run.store.running()) {
    if (isBatchLine(row)) continue; // its runner ends it (./batch-runner.ts)
    const work = run.op.work(run.spec, run.store.workStage(row.stage));
    const deadline = (row.dispatched_at ?? 0) + executorOf(work).lostAfterMs(work);
    if (deadline < now) await run.lost(row, "no report from its worker in time");
  }
  if (isTerminal(run.status)) return null;
  run.store.releaseDue(now);
  const starvedLeft = await giveUpStarved(run, now); // more than one turn's worth: the rest at once
  if (isTerminal(run.status)) return null;
  const batchPoll = run.spec.execution ? await run.batches.tick(now) : null; // ./batch-runner.ts
  // A batch the job's end cancelled while it was being created: its end is read.
  if (isTerminal(run.status)) return batchPoll;
  await run.dispatchAndSettle();
  if (isTerminal(run.status)) return null;
  await run.mirror.flush();
  if (starvedLeft) return Date.now();
  // A paused job with nothing under way has nothing to sweep: resume or cancel wakes it.
  if (run.status === "paused" && run.store.running().length === 0) return null;
  return Math.min(now + SWEEP_INTERVAL_MS, run.store.nextWaitingAt() ?? Infinity, batchPoll ?? Infinity);
}

/** An ended job's alarm: its finalization (or its webhook's next look), and its cancelled batches' late lines. */
async function afterEnd(run: JobRun): Promise<number | null> {
  let look: number | null = null;
  if (!run.finalized) await run.finish(run.status);
  else look = await watchWebhook(run);
  if (!run.spec.execution) return look;
  const poll = await run.batches.afterEnd(Date.now());
  await run.mirror.flush();
  if (look === null || poll === null) return look ?? poll;
  return Math.min(look, poll);
}
