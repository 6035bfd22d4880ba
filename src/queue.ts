/**
 * The Queue consumer. Messages are timers: `wake_job` tells a job's coordinator that a backoff is
 * over. Delivery is at-least-once and a duplicate is harmless (the coordinator's storage decides
 * what is due). Messages that reach the dead-letter queue are logged.
 */
export type TaskMessage = { type: "wake_job"; job_id: string };

export async function handleQueue(batch: MessageBatch<TaskMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const body = message.body;
    if (batch.queue.endsWith("-dlq")) {
      console.error("dead-lettered message", JSON.stringify(body));
      message.ack();
      continue;
    }
    try {
      if (body.type === "wake_job") {
        await env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(body.job_id)).wake();
      }
      message.ack();
    } catch (err) {
      console.error("queue message failed; it will be retried", err);
      message.retry();
    }
  }
}
