/**
 * Webhook URL safety and the retry schedule.
 * - URLs follow the deployment's destination policy (../net/destination.ts);
 * - failed deliveries are retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
 *   (WEBHOOK_RETRY_SCHEDULE_SECS overrides it), then marked failed.
 */
import { readVar } from "../config";
import { destinationProblem } from "../net/destination";

export { isPrivateHost } from "../net/destination";

export const DEFAULT_SCHEDULE_SECS = [5, 300, 1800, 7200, 18000, 36000, 36000];
export const QUEUE_MAX_DELAY_SECS = 43_200; // Cloudflare Queues' longest delaySeconds (12 h)

export function retrySchedule(env: object): number[] {
  const raw = readVar(env, "WEBHOOK_RETRY_SCHEDULE_SECS");
  if (!raw) return DEFAULT_SCHEDULE_SECS;
  const parsed = raw.split(",").map((s) => Number(s.trim()));
  return parsed.every((n) => Number.isFinite(n) && n >= 0) && parsed.length > 0 ? parsed : DEFAULT_SCHEDULE_SECS;
}

/** Why this webhook URL is refused here, or null: the deployment's one destination policy. */
export const webhookUrlProblem = destinationProblem;
