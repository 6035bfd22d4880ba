/** Attempt outcomes as the call workers report them, for the task machine's tests (unit) and the runner's simulation (integration). */
import type { AttemptOutcome } from "../../../src/engine/retry-policy";

export const usage = { input_tokens: 1, output_tokens: 1 };
export const ok = (output: unknown = "ok"): AttemptOutcome => ({ kind: "success", output, usage });
export const throttle = (retryAfterMs: number | null = null): AttemptOutcome => ({
  kind: "transient",
  error: "429 Too Many Requests",
  retryAfterMs,
  throttled: true,
  usage,
});
export const transient = (): AttemptOutcome => ({ kind: "transient", error: "500 server error", retryAfterMs: null, usage });
export const invalid = (): AttemptOutcome => ({ kind: "invalid", error: "not JSON", problems: ["the response is not valid JSON"], usage });
export const timeout = (): AttemptOutcome => ({ kind: "timeout", error: "timed out", usage });
export const crash = (): AttemptOutcome => ({ kind: "crash", error: "the worker threw", usage });
