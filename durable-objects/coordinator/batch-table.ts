/**
 * The provider batches of a job (schema step 7), in the coordinator's storage — the truth about
 * them: a batch row is written before its submission (`submitting`), so a restart knows of every
 * batch it may have created; its tasks are `running` with `batch_id` set and no slot.
 *
 *   submitting → running → ended        (its results read and settled)
 *   submitting → failed                 (the provider refused it; its lines went back to their tasks' policy)
 */
import { exactLimit } from "./sql-limit";

export type BatchStatus = "submitting" | "running" | "ended" | "failed";

export type BatchRow = {
  id: string;
  stage: string;
  provider: string;
  provider_batch_id: string | null;
  status: BatchStatus;
  provider_status: string | null;
  requests: number;
  completed: number;
  failed: number;
  created_at: number;
  submitted_at: number | null;
  ended_at: number | null;
  next_poll_at: number;
  polls: number;
  cancel_requested: number;
  /** The fingerprint of the credential that submitted it (src/llm/batch/owner.ts); null: a batch stored before it was kept. */
  credential: string | null;
  /** When its cancel was asked for (null: never, or before it was kept). */
  cancelled_at: number | null;
};

/** A batch as GET /v1/jobs/{id} and the BATCH_* events show it. */
export function providerBatchView(row: BatchRow) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id,
    provider_batch_id: row.provider_batch_id,
    stage: row.stage,
    status: row.status === "running" ? (row.provider_status ?? "running") : row.status,
    requests: row.requests,
    completed: row.completed,
    failed: row.failed,
    submitted_at: iso(row.submitted_at),
    ended_at: iso(row.ended_at),
  };
}

/** The batches and their lines: a task is a line while it runs with `batch_id` set and the batch's token. */
export class BatchTable<TaskRow extends Record<string, SqlStorageValue> & { stage: string; idx: number }> {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  add(row: Pick<BatchRow, "id" | "stage" | "provider" | "requests" | "created_at" | "credential">): void {
    this.#sql.exec(
      "INSERT INTO batches (id, stage, provider, status, requests, created_at, credential) VALUES (?, ?, ?, 'submitting', ?, ?, ?)",
      row.id,
      row.stage,
      row.provider,
      row.requests,
      row.created_at,
      row.credential,
    );
  }

  get(id: string): BatchRow | null {
    return this.#sql.exec<BatchRow>("SELECT * FROM batches WHERE id = ?", id).toArray()[0] ?? null;
  }

  all(): BatchRow[] {
    return this.#sql.exec<BatchRow>("SELECT * FROM batches ORDER BY created_at, id").toArray();
  }

  /** Batches not ended: submitting or running. */
  open(): BatchRow[] {
    return this.#sql.exec<BatchRow>("SELECT * FROM batches WHERE status IN ('submitting', 'running') ORDER BY created_at, id").toArray();
  }

  submitted(id: string, providerId: string, now: number, nextPollAt: number): void {
    this.#sql.exec(
      "UPDATE batches SET status = 'running', provider_batch_id = ?, submitted_at = ?, next_poll_at = ? WHERE id = ?",
      providerId,
      now,
      nextPollAt,
      id,
    );
  }

  /** A poll's answer: the provider's counts and status, and when to ask again. */
  polled(id: string, state: { status: string; completed: number; failed: number }, nextPollAt: number): void {
    this.#sql.exec(
      "UPDATE batches SET provider_status = ?, completed = ?, failed = ?, next_poll_at = ?, polls = polls + 1 WHERE id = ?",
      state.status,
      state.completed,
      state.failed,
      nextPollAt,
      id,
    );
  }

  end(id: string, status: "ended" | "failed", now: number): void {
    this.#sql.exec("UPDATE batches SET status = ?, ended_at = ? WHERE id = ?", status, now, id);
  }

  /** A cancel was asked for: polled again at `pollAt`, its backoff started over. */
  cancelRequested(id: string, pollAt: number, now = Date.now()): void {
    this.#sql.exec(
      "UPDATE batches SET cancel_requested = 1, cancelled_at = COALESCE(cancelled_at, ?), next_poll_at = ?, polls = 0 WHERE id = ?",
      now,
      pollAt,
      id,
    );
  }

  /** A stage's pending tasks, in index order (the next batch's lines). */
  pendingOf(stage: string, limit: number): TaskRow[] {
    // Its limits are constants (a provider's batch size, an alarm's share): each its own statement text, read exactly.
    return this.#sql.exec<TaskRow>(`SELECT * FROM tasks WHERE state = 'pending' AND stage = ? ORDER BY idx ${exactLimit(limit)}`, stage).toArray();
  }

  /** The tasks a batch is running (lines it has not answered yet; not those execution mode auto moved to realtime). */
  inBatch(batchId: string): TaskRow[] {
    return this.#sql.exec<TaskRow>("SELECT * FROM tasks WHERE batch_id = ? AND state = 'running' AND token = ?", batchId, `batch:${batchId}`).toArray();
  }

  /** Every task that was a line of the batch, whatever it has become since (execution mode auto). */
  ofBatch(batchId: string): TaskRow[] {
    return this.#sql.exec<TaskRow>("SELECT * FROM tasks WHERE batch_id = ?", batchId).toArray();
  }

  /** When the next open batch is due a poll (null: none is open). */
  nextPollAt(): number | null {
    return this.#sql.exec<{ t: number | null }>("SELECT MIN(next_poll_at) AS t FROM batches WHERE status = 'running'").one().t;
  }
}
