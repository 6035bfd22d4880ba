/**
 * Deleting a finished job (DELETE /v1/jobs/{id}, and the retention sweep): its coordinator's
 * storage (tasks, events), its workers' and sub-sessions' objects, then its rows in D1 — results,
 * sessions and their messages, webhook deliveries and attempts, the job. Objects go first: if
 * the D1 step fails the job is still listed and a second delete finishes the work.
 */
import { retentionDays } from "../config";
import { agentSession, callWorker, jobCoordinator } from "../objects";

const PARALLEL = 32; // RPCs to objects at a time

async function inBatches<T>(items: T[], run: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += PARALLEL) await Promise.all(items.slice(i, i + PARALLEL).map(run));
}

export async function deleteJob(env: Env, jobId: string): Promise<void> {
  const { workers } = await jobCoordinator(env, jobId).purge();
  await inBatches(workers, (name) => callWorker(env, name).purge(jobId));
  const { results } = await env.DB.prepare("SELECT id FROM sessions WHERE job_id = ?").bind(jobId).all<{ id: string }>();
  await inBatches(results, (s) => agentSession(env, s.id).purge());
  await env.DB.batch([
    env.DB.prepare("DELETE FROM session_messages WHERE session_id IN (SELECT id FROM sessions WHERE job_id = ?)").bind(jobId),
    env.DB.prepare("DELETE FROM sessions WHERE job_id = ?").bind(jobId),
    env.DB.prepare("DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE job_id = ?)").bind(jobId),
    env.DB.prepare("DELETE FROM webhook_deliveries WHERE job_id = ?").bind(jobId),
    env.DB.prepare("DELETE FROM results WHERE job_id = ?").bind(jobId),
    env.DB.prepare("DELETE FROM jobs WHERE id = ?").bind(jobId),
  ]);
}

const SWEEP_BATCH = 25; // jobs per run of the sweep: the next run takes the rest

/** Finished jobs older than JOB_RETENTION_DAYS (by completion) are deleted, oldest first; returns how many. */
export async function sweepExpiredJobs(env: Env, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - retentionDays(env) * 86_400_000).toISOString();
  const { results } = await env.DB.prepare(
    "SELECT id FROM jobs WHERE status IN ('completed', 'failed', 'cancelled') AND completed_at IS NOT NULL AND completed_at < ? ORDER BY completed_at LIMIT ?",
  )
    .bind(cutoff, SWEEP_BATCH)
    .all<{ id: string }>();
  for (const job of results) await deleteJob(env, job.id);
  return results.length;
}
