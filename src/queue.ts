/**
 * The Queue consumer. `wake_job` messages are timers: a job's backoff is over (a duplicate is
 * harmless: the coordinator's storage decides what is due). `deliver_webhook` messages make one
 * delivery attempt (a duplicate cannot send twice: attempts are claimed in D1). Messages on the
 * dead-letter queue are logged and, for webhooks, the delivery is left marked failed.
 */
import { attemptDelivery, type WebhookMessage } from "./webhooks/deliver";

export type TaskMessage = { type: "wake_job"; job_id: string } | WebhookMessage;

export async function handleQueue(batch: MessageBatch<TaskMessage>, env: Env): Promise<void> {
  const deadLetters = batch.queue.endsWith("-dlq");
  await Promise.all(
    batch.messages.map(async (message) => {
      const body = message.body;
      if (deadLetters) {
        console.error("dead-lettered message", JSON.stringify(body));
        message.ack();
        return;
      }
      try {
        if (body.type === "wake_job") {
          await env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(body.job_id)).wake();
        } else if (body.type === "deliver_webhook") {
          await attemptDelivery(env, body);
        }
        message.ack();
      } catch (err) {
        console.error("queue message failed; it will be retried", err);
        message.retry();
      }
    }),
  );
}
