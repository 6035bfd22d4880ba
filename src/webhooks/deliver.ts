/**
 * One delivery attempt of a webhook, run by the Queue consumer: sign, POST with a 15 s timeout,
 * read at most 64 KB of the answer (keep 1 KB), record the attempt, and schedule the next one.
 * Only a 2xx counts as delivered; 410 Gone disables the delivery; Retry-After on 429/503 is
 * honoured when longer than the schedule; past the schedule the delivery is failed and its
 * message goes to the dead-letter queue.
 */
import { encryptionKey } from "../config";
import { claimAttempt, getDelivery, jobWebhookSecret, recordAttempt, type DeliveryRow } from "../db/webhooks";
import { assertResolvedDestination, DestinationRefused } from "../net/destination";
import { QUEUE_MAX_DELAY_SECS, retrySchedule } from "./policy";
import { sign } from "./signing";

export const DELIVERY_TIMEOUT_MS = 15_000;
const MAX_READ_BYTES = 64 * 1024;
const MAX_KEPT_BYTES = 1024;
const LEASE_MS = DELIVERY_TIMEOUT_MS + 15_000; // an attempt that dies mid-way frees its lease after this

import { sendMessage, type WebhookMessage } from "../queue-messages";

async function readLimited(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < MAX_READ_BYTES) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
  const bytes = new Uint8Array(Math.min(size, MAX_KEPT_BYTES));
  let offset = 0;
  for (const chunk of chunks) {
    if (offset >= bytes.length) break;
    const part = chunk.subarray(0, bytes.length - offset);
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

function retryAfterSecs(res: Response): number | null {
  if (res.status !== 429 && res.status !== 503) return null;
  const raw = res.headers.get("retry-after");
  if (!raw) return null;
  const secs = Number(raw);
  if (Number.isFinite(secs)) return secs;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}

interface Sent {
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
  retryAfter: number | null;
  durationMs: number;
}

async function send(env: Env, delivery: DeliveryRow, secret: string): Promise<Sent> {
  const timestamp = Math.floor(Date.now() / 1000);
  const started = Date.now();
  try {
    await assertResolvedDestination(env, delivery.url); // judged at submission; its name is resolved now
    const res = await fetch(delivery.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "Fanout-Webhooks/1",
        "webhook-id": delivery.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": await sign(secret, delivery.id, timestamp, delivery.payload),
      },
      body: delivery.payload,
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    const excerpt = await readLimited(res);
    const ok = res.status >= 200 && res.status < 300;
    return { statusCode: res.status, error: ok ? null : `HTTP ${res.status}`, excerpt, retryAfter: retryAfterSecs(res), durationMs: Date.now() - started };
  } catch (err) {
    const timeout = err instanceof Error && err.name === "TimeoutError";
    const error =
      err instanceof DestinationRefused
        ? `refused: ${err.reason}`
        : timeout
          ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`
          : `could not connect: ${err instanceof Error ? err.message : String(err)}`;
    return { statusCode: null, error: error.slice(0, 500), excerpt: null, retryAfter: null, durationMs: Date.now() - started };
  }
}

/** Makes one attempt of a delivery if it is due (or `manual`), and schedules what comes next. */
export async function attemptDelivery(env: Env, message: WebhookMessage): Promise<void> {
  const now = Date.now();
  const manual = message.manual === true;
  const claim = await claimAttempt(env.DB, message.delivery_id, now, LEASE_MS, manual);
  if (claim === null) return; // delivered, not due yet, or another attempt is under way: a duplicate
  const { attempt, scheduled } = claim;
  const delivery = await getDelivery(env.DB, message.delivery_id);
  if (!delivery) return;
  const secret = await jobWebhookSecret(env.DB, encryptionKey(env), delivery.job_id, delivery.tenant_id);
  const sent = await send(env, delivery, secret);

  let status: DeliveryRow["status"];
  let nextAttemptAt: number | null = null;
  const schedule = retrySchedule(env);
  if (sent.statusCode !== null && sent.statusCode >= 200 && sent.statusCode < 300) status = "delivered";
  else if (sent.statusCode === 410) status = "disabled";
  else if (manual) {
    // One extra attempt: it does not move the schedule of a delivery still retrying.
    status = delivery.status === "delivered" ? "failed" : delivery.status;
    nextAttemptAt = delivery.status === "pending" ? delivery.next_attempt_at : null;
  } else if (scheduled <= schedule.length) {
    const delaySecs = Math.min(Math.max(schedule[scheduled - 1] ?? 0, sent.retryAfter ?? 0), QUEUE_MAX_DELAY_SECS);
    status = "pending";
    nextAttemptAt = Date.now() + delaySecs * 1000;
    await sendMessage(env, message, Math.ceil(delaySecs));
  } else {
    status = "failed";
    await env.DEAD_LETTERS.send({ ...message, reason: `no 2xx after ${scheduled} scheduled attempts` });
  }
  await recordAttempt(
    env.DB,
    delivery.id,
    {
      attempt,
      attempted_at: new Date(now).toISOString(),
      status_code: sent.statusCode,
      duration_ms: sent.durationMs,
      error: sent.error,
      response_excerpt: sent.excerpt,
      next_attempt_at: nextAttemptAt === null ? null : new Date(nextAttemptAt).toISOString(),
    },
    { status, nextAttemptAt },
  );
}
