/**
 * The coordinator's side of webhooks: once its job has ended it creates the MAP_COMPLETED delivery
 * (exactly once per round: D1's unique (job_id, event_type, round); a recovered job ends in a new
 * round) and queues the first attempt. Then, while the
 * delivery is pending, its alarm re-queues an attempt whose Queue message was lost (local queues
 * drop delayed messages on restart): the D1 row is the truth, the Queue only a timer.
 */
import { createDelivery, getDelivery } from "../../src/db/webhooks";
import { newId } from "../../src/lib/ids";
import { sendMessage } from "../../src/queue-messages";
import type { JobSpec } from "../../src/operators/registry";
import type { CompletedEvent } from "./job-meta";
import type { CoordinatorStore } from "./store";

export const LOST_MESSAGE_GRACE_MS = 10_000; // a Queue message this late is presumed lost (they arrive in seconds)

/** Returns when to look again (ms epoch), or null when the delivery needs no more watching. */
export async function sweepWebhook(
  env: Env,
  store: CoordinatorStore,
  job: { jobId: string; tenantId: string; url: string },
  completed: CompletedEvent,
): Promise<number | null> {
  const now = Date.now();
  const round = completed.round ?? 1; // events stored by a v1 deploy have no round
  let deliveryId = store.getMeta(`webhook_delivery_id:${round}`) ?? (round === 1 ? store.getMeta("webhook_delivery_id") : undefined);
  if (!deliveryId) {
    const payload = JSON.stringify({ type: "MAP_COMPLETED", timestamp: completed.completedAt, data: completed.data });
    deliveryId = await createDelivery(
      env.DB,
      { id: newId("whd"), jobId: job.jobId, tenantId: job.tenantId, eventType: "MAP_COMPLETED", round, url: job.url, payload },
      now,
    );
    store.setMeta(`webhook_delivery_id:${round}`, deliveryId);
    await sendMessage(env, { type: "deliver_webhook", delivery_id: deliveryId });
    return now + LOST_MESSAGE_GRACE_MS;
  }
  const delivery = await getDelivery(env.DB, deliveryId);
  if (!delivery || delivery.status !== "pending") return null;
  const due = delivery.next_attempt_at ?? now;
  const leased = delivery.lease_until !== null && delivery.lease_until > now;
  if (!leased && due + LOST_MESSAGE_GRACE_MS <= now) {
    await sendMessage(env, { type: "deliver_webhook", delivery_id: deliveryId });
    return now + LOST_MESSAGE_GRACE_MS;
  }
  return due + LOST_MESSAGE_GRACE_MS > now ? due + LOST_MESSAGE_GRACE_MS : now + LOST_MESSAGE_GRACE_MS;
}

/** After the end: deliver MAP_COMPLETED to the job's webhook, and watch it until it settles. Answers when to look again (null: settled, or nothing to watch). */
export async function watchWebhook(run: { readonly env: Env; readonly spec: JobSpec; readonly store: CoordinatorStore }): Promise<number | null> {
  const spec = run.spec;
  const completed = run.store.getMeta("completed_event");
  if (!spec.webhook || !completed || run.store.getMeta("webhook_settled")) return null;
  try {
    const next = await sweepWebhook(run.env, run.store, { jobId: spec.jobId, tenantId: spec.tenantId, url: spec.webhook.url }, completed);
    if (next === null) run.store.setMeta("webhook_settled", true);
    return next;
  } catch (err) {
    console.error("webhook sweep failed; retrying", err);
    return Date.now() + 5_000;
  }
}
