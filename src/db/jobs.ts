/** Jobs and results in D1: created by the API, kept current by each job's coordinator. */
import type { ModelWarning } from "../llm/lifecycle";
import type { JobCounts } from "../engine/counters";
import type { TaskResult } from "../engine/types";
/** A finished task result waiting in a coordinator's outbox to be copied here. */
export type OutboxRow = {
  stage: string;
  idx: number;
  seq: number;
  success: number;
  data: string;
};

/** A result as stored: the operator's result shape, as the coordinator made it (v1 results are unchanged). */
export type StoredResult = TaskResult;

export interface JobRow extends JobCounts {
  id: string;
  tenant_id: string;
  type: string;
  status: string;
  model: string;
  total: number;
  metadata: string;
  name: string | null;
  /** JSON: the ModelWarnings of its submission (null: none). */
  warnings: string | null;
  /** An evaluation's: the job it evaluates. */
  evaluates: string | null;
  idempotency_key: string | null;
  request_hash: string;
  created_ms: number;
  created_at: string;
  completed_at: string | null;
  webhook_url: string | null;
  main_stage: string;
  stage: string | null;
  stages: string; // JSON
  output: string | null; // JSON
  error: string | null; // JSON
  budget: string | null; // JSON
  pause_reason: string | null;
  effective_concurrency: number | null;
  pacing: string | null; // JSON
  execution: string | null; // JSON
  batches: string | null; // JSON
  models?: string | null; // JSON: a job with fallbacks, each model of its chain (migrations/0015)
}

export interface JobProgress extends JobCounts {
  status: string;
  total: number;
  completed_at: string | null;
  stage: string | null;
  stages: unknown[];
  output: unknown;
  error: unknown;
  budget: unknown;
  pause_reason: string | null;
  effective_concurrency: number;
  pacing: unknown;
  execution: unknown;
  batches: unknown[];
  models: unknown[];
}

export interface NewJob {
  id: string;
  tenantId: string;
  type: string;
  model: string;
  total: number;
  mainStage: string;
  metadata: Record<string, unknown>;
  name: string | null;
  warnings: ModelWarning[];
  evaluates: string | null;
  idempotencyKey: string | null;
  requestHash: string;
  webhookUrl: string | null;
  webhookSecretEnc: string | null;
}

/**
 * Inserts a job unless the tenant already has `maxActive` jobs queued or running, or already has a
 * job with this idempotency key; returns whether it was inserted. One statement, so concurrent
 * submissions cannot race past the limit (D1 runs each statement atomically).
 */
export async function insertJob(db: D1Database, job: NewJob, now: Date, maxActive: number): Promise<boolean> {
  const result = await db
    .prepare(
      `INSERT INTO jobs (id, tenant_id, type, status, model, total, main_stage, metadata, idempotency_key, request_hash, created_ms,
         created_at, webhook_url, webhook_secret_enc, name, warnings, evaluates)
       SELECT ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE (SELECT COUNT(*) FROM jobs WHERE tenant_id = ? AND status IN ('queued', 'running')) < ?
       ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
    )
    .bind(
      job.id,
      job.tenantId,
      job.type,
      job.model,
      job.total,
      job.mainStage,
      JSON.stringify(job.metadata),
      job.idempotencyKey,
      job.requestHash,
      now.getTime(),
      now.toISOString(),
      job.webhookUrl,
      job.webhookSecretEnc,
      job.name,
      job.warnings.length > 0 ? JSON.stringify(job.warnings) : null,
      job.evaluates,
      job.tenantId,
      maxActive,
    )
    .run();
  return result.meta.changes > 0;
}

/** The evaluations of a job, newest first (at most `limit`). */
export async function evaluationsOf(db: D1Database, tenantId: string, jobId: string, limit = 100): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT id FROM jobs WHERE tenant_id = ? AND evaluates = ? ORDER BY created_ms DESC, id DESC LIMIT ?")
    .bind(tenantId, jobId, limit)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

/** Removes a job whose coordinator never took it: a refused or failed submission leaves no trace. */
export async function deleteJob(db: D1Database, jobId: string): Promise<void> {
  await db.prepare("DELETE FROM jobs WHERE id = ?").bind(jobId).run();
}

export async function findJobByIdempotencyKey(db: D1Database, tenantId: string, key: string): Promise<JobRow | null> {
  return db.prepare("SELECT * FROM jobs WHERE tenant_id = ? AND idempotency_key = ?").bind(tenantId, key).first<JobRow>();
}

/** A job of this tenant, or null: another tenant's job is indistinguishable from none. */
export async function getJob(db: D1Database, tenantId: string, jobId: string): Promise<JobRow | null> {
  return db.prepare("SELECT * FROM jobs WHERE id = ? AND tenant_id = ?").bind(jobId, tenantId).first<JobRow>();
}

export async function listJobs(
  db: D1Database,
  tenantId: string,
  options: { status?: string; limit: number; before?: { createdMs: number; id: string } },
): Promise<JobRow[]> {
  const where = ["tenant_id = ?"];
  const params: (string | number)[] = [tenantId];
  if (options.status) {
    where.push("status = ?");
    params.push(options.status);
  }
  if (options.before) {
    where.push("(created_ms < ? OR (created_ms = ? AND id < ?))");
    params.push(options.before.createdMs, options.before.createdMs, options.before.id);
  }
  const { results } = await db
    .prepare(`SELECT * FROM jobs WHERE ${where.join(" AND ")} ORDER BY created_ms DESC, id DESC LIMIT ?`)
    .bind(...params, options.limit)
    .all<JobRow>();
  return results;
}

/** At most this much JSON per statement of many results: well under a bound value's limit (2 MB on Cloudflare). */
const RESULT_CHUNK_CHARS = 512 * 1024;

// A recovered task's newer result replaces the old one: one result per (stage, index), the newest.
const RESULT_UPSERT = `ON CONFLICT (job_id, stage, idx) DO UPDATE SET completion_seq = excluded.completion_seq, success = excluded.success,
  data = excluded.data WHERE excluded.completion_seq > results.completion_seq`;

/**
 * The statements that copy finished results to D1: a chunk of rows per statement, as one JSON array
 * of `[stage, idx, seq, success, data]` read back with `json_each` (50 results: one statement, not
 * 50 — each statement costs D1 its own round of work), a row too large for a chunk on its own.
 */
export function resultStatements(db: D1Database, jobId: string, rows: OutboxRow[]): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  let chunk: string[] = [];
  let chars = 0;
  const flush = () => {
    if (chunk.length === 0) return;
    const sql = `INSERT INTO results (job_id, stage, idx, completion_seq, success, data)
      SELECT ?, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?) WHERE true ${RESULT_UPSERT}`;
    statements.push(db.prepare(sql).bind(jobId, `[${chunk.join(",")}]`));
    chunk = [];
    chars = 0;
  };
  for (const row of rows) {
    const text = JSON.stringify([row.stage, row.idx, row.seq, row.success, row.data]);
    if (chars + text.length > RESULT_CHUNK_CHARS) flush();
    if (text.length > RESULT_CHUNK_CHARS) {
      const sql = `INSERT INTO results (job_id, stage, idx, completion_seq, success, data) VALUES (?, ?, ?, ?, ?, ?) ${RESULT_UPSERT}`;
      statements.push(db.prepare(sql).bind(jobId, row.stage, row.idx, row.seq, row.success, row.data));
      continue;
    }
    chunk.push(text);
    chars += text.length + 1;
  }
  flush();
  return statements;
}

/**
 * Copies a batch of finished results and the job's counters in one D1 transaction; first drops
 * the stored results of `dropStages` (stages a recover plans anew).
 */
export async function writeJobProgress(db: D1Database, jobId: string, progress: JobProgress, rows: OutboxRow[], dropStages: string[] = []): Promise<void> {
  const drops = dropStages.map((stage) => db.prepare("DELETE FROM results WHERE job_id = ? AND stage = ?").bind(jobId, stage));
  const statements = resultStatements(db, jobId, rows);
  statements.push(
    db
      .prepare(
        `UPDATE jobs SET status = ?, total = ?, completed = ?, succeeded = ?, failed = ?, total_attempts = ?,
           input_tokens = ?, output_tokens = ?, cached_calls = ?, cached_input_tokens = ?, cached_output_tokens = ?,
           cache_read_tokens = ?, cache_write_tokens = ?, cost_usd = ?, unpriced_calls = ?,
           duplicated_input_tokens = ?, duplicated_output_tokens = ?, duplicated_cost_usd = ?, interrupted_calls = ?, interrupted_input_tokens = ?,
           completed_at = ?, stage = ?, stages = ?, output = ?, error = ?, budget = ?, pause_reason = ?, effective_concurrency = ?, pacing = ?,
           execution = ?, batches = ?, models = ? WHERE id = ?`,
      )
      .bind(
        progress.status,
        progress.total,
        progress.completed,
        progress.succeeded,
        progress.failed,
        progress.total_attempts,
        progress.input_tokens,
        progress.output_tokens,
        progress.cached_calls,
        progress.cached_input_tokens,
        progress.cached_output_tokens,
        progress.cache_read_tokens,
        progress.cache_write_tokens,
        progress.cost_usd,
        progress.unpriced_calls,
        progress.duplicated_input_tokens,
        progress.duplicated_output_tokens,
        progress.duplicated_cost_usd,
        progress.interrupted_calls,
        progress.interrupted_input_tokens,
        progress.completed_at,
        progress.stage,
        JSON.stringify(progress.stages),
        progress.output === undefined ? null : JSON.stringify(progress.output),
        progress.error ? JSON.stringify(progress.error) : null,
        progress.budget ? JSON.stringify(progress.budget) : null,
        progress.pause_reason,
        progress.effective_concurrency,
        JSON.stringify(progress.pacing),
        JSON.stringify(progress.execution),
        JSON.stringify(progress.batches),
        progress.models.length > 0 ? JSON.stringify(progress.models) : null,
        jobId,
      ),
  );
  await db.batch([...drops, ...statements]);
}

export type ResultOrder = "input" | "completion";

/** A boolean filter of results, as an operator declares it (src/operators/define.ts: ResultFlag). */
export interface ResultFlagQuery {
  path: string;
  value: boolean;
  succeededOnly: boolean;
}

export async function listResults(
  db: D1Database,
  jobId: string,
  options: { stage: string; order: ResultOrder; status?: "succeeded" | "failed"; flags?: ResultFlagQuery[]; limit: number; after?: number },
): Promise<{ results: StoredResult[]; keys: number[] }> {
  const column = options.order === "input" ? "idx" : "completion_seq";
  const where = ["job_id = ?", "stage = ?"];
  const params: (string | number)[] = [jobId, options.stage];
  if (options.status) {
    where.push("success = ?");
    params.push(options.status === "succeeded" ? 1 : 0);
  }
  for (const flag of options.flags ?? []) {
    // The operator's boolean at a JSON path of the stored result (JSON true and false read as 1 and 0).
    if (flag.succeededOnly) where.push("success = 1");
    where.push("json_extract(data, ?) = ?");
    params.push(flag.path, flag.value ? 1 : 0);
  }
  if (options.after !== undefined) {
    where.push(`${column} > ?`);
    params.push(options.after);
  }
  const { results } = await db
    .prepare(`SELECT ${column} AS k, data FROM results WHERE ${where.join(" AND ")} ORDER BY ${column} LIMIT ?`)
    .bind(...params, options.limit)
    .all<{ k: number; data: string }>();
  return { results: results.map((r) => JSON.parse(r.data) as StoredResult), keys: results.map((r) => r.k) };
}

/** Every stored result of a job, over all its stages (the audit of a map-reduce job). */
export async function listAllResults(db: D1Database, jobId: string): Promise<(StoredResult & { stage: string })[]> {
  const { results } = await db
    .prepare("SELECT stage, data FROM results WHERE job_id = ? ORDER BY stage, idx")
    .bind(jobId)
    .all<{ stage: string; data: string }>();
  return results.map((r) => ({ ...(JSON.parse(r.data) as StoredResult), stage: r.stage }));
}
