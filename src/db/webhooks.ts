/** Webhook secrets, deliveries and attempts in D1. */
import { seal, unseal } from "../lib/crypto";
import { generateSecret } from "../webhooks/signing";

export interface DeliveryRow {
  id: string;
  job_id: string;
  tenant_id: string;
  event_type: string;
  round: number; // 1, then one more per recover of the job
  url: string;
  payload: string;
  status: "pending" | "delivered" | "failed" | "disabled";
  attempt_count: number;
  next_attempt_at: number | null;
  lease_until: number | null;
  created_at: string;
}

export interface AttemptRow {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
  next_attempt_at: string | null;
}

export async function tenantSecret(db: D1Database, key: string, tenantId: string): Promise<string> {
  const row = await db.prepare("SELECT webhook_secret_enc FROM tenants WHERE id = ?").bind(tenantId).first<{ webhook_secret_enc: string | null }>();
  if (row?.webhook_secret_enc) return unseal(row.webhook_secret_enc, key);
  const secret = generateSecret();
  // Only the first writer wins, so two concurrent first reads agree on one secret.
  await db
    .prepare("UPDATE tenants SET webhook_secret_enc = ? WHERE id = ? AND webhook_secret_enc IS NULL")
    .bind(await seal(secret, key), tenantId)
    .run();
  const stored = await db.prepare("SELECT webhook_secret_enc FROM tenants WHERE id = ?").bind(tenantId).first<{ webhook_secret_enc: string }>();
  return unseal(stored?.webhook_secret_enc ?? "", key);
}

export async function rotateTenantSecret(db: D1Database, key: string, tenantId: string): Promise<string> {
  const secret = generateSecret();
  await db
    .prepare("UPDATE tenants SET webhook_secret_enc = ? WHERE id = ?")
    .bind(await seal(secret, key), tenantId)
    .run();
  return secret;
}

/** The secret a job's deliveries are signed with: its own, else the tenant's default. */
export async function jobWebhookSecret(db: D1Database, key: string, jobId: string, tenantId: string): Promise<string> {
  const row = await db.prepare("SELECT webhook_secret_enc FROM jobs WHERE id = ?").bind(jobId).first<{ webhook_secret_enc: string | null }>();
  return row?.webhook_secret_enc ? unseal(row.webhook_secret_enc, key) : tenantSecret(db, key, tenantId);
}

/** Creates the delivery of a job's event once; returns its id either way. */
export async function createDelivery(
  db: D1Database,
  delivery: { id: string; jobId: string; tenantId: string; eventType: string; round: number; url: string; payload: string },
  now: number,
): Promise<string> {
  await db
    .prepare(
      `INSERT INTO webhook_deliveries (id, job_id, tenant_id, event_type, round, url, payload, status, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (job_id, event_type, round) DO NOTHING`,
    )
    .bind(delivery.id, delivery.jobId, delivery.tenantId, delivery.eventType, delivery.round, delivery.url, delivery.payload, now, new Date(now).toISOString())
    .run();
  const row = await db
    .prepare("SELECT id FROM webhook_deliveries WHERE job_id = ? AND event_type = ? AND round = ?")
    .bind(delivery.jobId, delivery.eventType, delivery.round)
    .first<{ id: string }>();
  return row?.id ?? delivery.id;
}

export async function getDelivery(db: D1Database, id: string): Promise<DeliveryRow | null> {
  return db.prepare("SELECT * FROM webhook_deliveries WHERE id = ?").bind(id).first<DeliveryRow>();
}

/**
 * Takes the right to make the next attempt. A scheduled attempt needs the delivery pending and
 * due; a manual one (redeliver) any status. Either way no other attempt may be under way, so a
 * duplicate Queue message cannot send twice. Returns the attempt number, or null.
 */
export async function claimAttempt(
  db: D1Database,
  id: string,
  now: number,
  leaseMs: number,
  manual: boolean,
): Promise<{ attempt: number; scheduled: number } | null> {
  const due = manual ? "" : "AND status = 'pending' AND next_attempt_at <= ?";
  const params: (string | number)[] = [manual ? 0 : 1, now + leaseMs, id, now];
  if (!manual) params.push(now);
  const row = await db
    .prepare(
      `UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, scheduled_attempts = scheduled_attempts + ?, lease_until = ?
       WHERE id = ? AND (lease_until IS NULL OR lease_until < ?) ${due} RETURNING attempt_count, scheduled_attempts`,
    )
    .bind(...params)
    .first<{ attempt_count: number; scheduled_attempts: number }>();
  return row ? { attempt: row.attempt_count, scheduled: row.scheduled_attempts } : null;
}

export async function recordAttempt(
  db: D1Database,
  deliveryId: string,
  attempt: AttemptRow,
  outcome: { status: DeliveryRow["status"]; nextAttemptAt: number | null },
): Promise<void> {
  await db.batch([
    db
      .prepare(
        `INSERT OR IGNORE INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, duration_ms, error, response_excerpt, next_attempt_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        deliveryId,
        attempt.attempt,
        attempt.attempted_at,
        attempt.status_code,
        attempt.duration_ms,
        attempt.error,
        attempt.response_excerpt,
        attempt.next_attempt_at,
      ),
    db
      .prepare("UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, lease_until = NULL WHERE id = ?")
      .bind(outcome.status, outcome.nextAttemptAt, deliveryId),
  ]);
}

export async function listDeliveries(db: D1Database, jobId: string): Promise<(DeliveryRow & { attempts: AttemptRow[] })[]> {
  const [deliveries, attempts] = await db.batch([
    db.prepare("SELECT * FROM webhook_deliveries WHERE job_id = ? ORDER BY round, created_at").bind(jobId),
    db
      .prepare(
        `SELECT a.* FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
         WHERE d.job_id = ? ORDER BY a.attempt`,
      )
      .bind(jobId),
  ]);
  const byDelivery = new Map<string, AttemptRow[]>();
  for (const a of (attempts?.results ?? []) as (AttemptRow & { delivery_id: string })[]) {
    const list = byDelivery.get(a.delivery_id) ?? [];
    list.push(a);
    byDelivery.set(a.delivery_id, list);
  }
  return ((deliveries?.results ?? []) as DeliveryRow[]).map((d) => ({ ...d, attempts: byDelivery.get(d.id) ?? [] }));
}
