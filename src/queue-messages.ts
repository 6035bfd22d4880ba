/**
 * Every message on the tasks Queue, and the one helper that sends them. `wake_job` is a timer (a
 * job's backoff is over); `deliver_webhook` makes one delivery attempt.
 */
export type WakeJobMessage = { type: "wake_job"; job_id: string };
export type WebhookMessage = { type: "deliver_webhook"; delivery_id: string; manual?: boolean };
export type TaskMessage = WakeJobMessage | WebhookMessage;

/** Sends one message, delayed by whole seconds (Queue delays have a one-second grain). */
export async function sendMessage(env: Env, message: TaskMessage, delaySeconds = 0): Promise<void> {
  await env.TASKS.send(message, delaySeconds > 0 ? { delaySeconds } : undefined);
}
