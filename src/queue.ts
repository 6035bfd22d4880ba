/**
 * The Queue consumer. `wake_job` messages are timers: a job's backoff is over (a duplicate is
 * harmless: the coordinator's storage decides what is due). `deliver_webhook` messages make one
 * delivery attempt (a duplicate cannot send twice: attempts are claimed in D1). Messages on the
 * dead-letter queue are logged and, for webhooks, the delivery is left marked failed. A failure
 * here is never an HTTP error: the message is retried by the Queue.
 */
import { jobCoordinator } from "./objects";
import type { TaskMessage } from "./queue-messages";
import { attemptDelivery } from "./webhooks/deliver";

export type { TaskMessage } from "./queue-messages";

async function handle(env: Env, body: TaskMessage): Promise<void> {
  switch (body.type) {
    case "wake_job":
      return jobCoordinator(env, body.job_id).wake();
    case "deliver_webhook":
      return attemptDelivery(env, body);
  }
}

export async function handleQueue(batch: MessageBatch<TaskMessage>, env: Env): Promise<void> {
  const deadLetters = batch.queue.endsWith("-dlq");
  await Promise.all(
    batch.messages.map(async (message) => {
      if (deadLetters) {
        console.error("dead-lettered message", JSON.stringify(message.body));
        message.ack();
        return;
      }
      try {
        await handle(env, message.body);
        message.ack();
      } catch (err) {
        console.error("queue message failed; it will be retried", err);
        message.retry();
      }
    }),
  );
}
