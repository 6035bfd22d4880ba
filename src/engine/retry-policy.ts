/**
 * What happens after one attempt of one task. Pure (the random source is a parameter), so the
 * policy is tested on its own:
 * - invalid output (unparseable JSON, schema mismatch) → retry at once with guidance;
 * - transient provider error → retry after d = min(0.5·2^(attempt−1), 8) s (the contract's "retry
 *   after", so a floor) plus a jitter drawn uniformly from [0, d/2), so a burst of 429s does not
 *   come back in lockstep; when the provider's Retry-After is longer, Retry-After (at most
 *   MAX_RETRY_AFTER_MS) plus that jitter;
 * - a rate-limit answer (a throttle: 429, 529, 503 with Retry-After) is back-pressure, not a
 *   failure: retried after the same delay (counting the throttles in a row), and it does not use up
 *   `max_retries` (`attempts` still counts every call sent); the task fails `rate_limited` only once
 *   it has waited longer than the job's max wait since its first throttle in a row;
 * - timeout → counts as an attempt, retried at once;
 * - a batch line that expired → counts as an attempt, retried at once (in a later batch); the
 *   last one fails the task with `expired`;
 * - permanent error → the task fails now;
 * - crash (the attempt threw inside the worker, or its worker was lost) → counts as an attempt,
 *   retried after the same jittered backoff; the last one fails the task with `internal`.
 * A task makes at most 1 + max_retries attempts; the last failure decides `error_kind`.
 * Executors that retry inside themselves (an agent's sub-session) report `success` or `permanent`.
 */
import type { Unavailable, Usage } from "../llm/types";

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_MAX_MS = 8_000;
/** The longest a provider's Retry-After delays one retry: a throttled task waits again after it (up to its max wait); any other transient failure is retried. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;

import type { ErrorKind, SubtaskSpawn } from "./types";
import type { SessionSpan } from "../agent/session-state";
import type { RateObservation } from "./pacing";
import { DEFAULT_MAX_WAIT_SECS } from "./limits";

/** The provider pushed back on the attempt (429, 529, 503 with Retry-After): back-pressure, not a failure. */
export function isThrottle(outcome: AttemptOutcome): outcome is Extract<AttemptOutcome, { kind: "transient" }> {
  return outcome.kind === "transient" && outcome.throttled === true;
}

/**
 * A throttle that is news of the key's rate limits (the adaptive limit and the pacer hear it): not
 * a tier's `busy` (the flex tier had no capacity: the task waits, the key's room is what it was).
 */
export function isRateLimited(outcome: AttemptOutcome): outcome is Extract<AttemptOutcome, { kind: "transient" }> {
  return isThrottle(outcome) && outcome.busy !== true;
}

/** `tool_error`: an agent's tools could not be loaded or reached (the message names the cause); no model was called. */

/** A task's waits on rate limits: its throttled attempts (not counted against max_retries), since when it is being throttled in a row (null: its last answer was no throttle), and how long it may wait (undefined: a spec stored before max_wait_secs, DEFAULT_MAX_WAIT_SECS). */
export interface RateWait {
  throttles: number;
  since: number | null;
  maxWaitMs: number | undefined;
  now: number;
}

type Details = { details?: Record<string, unknown> | null };

/** Why the model could not answer at all (../llm/types.ts): its item goes to the next model of its chain. */
type Availability = { unavailable?: Unavailable };

export type AttemptOutcome = (
  | ({ kind: "success"; output: unknown; usage: Usage; cached?: Usage } & Details) // cached: from the response cache; what the original call cost
  | { kind: "invalid"; error: string; problems: string[]; usage: Usage }
  | ({ kind: "transient"; error: string; retryAfterMs: number | null; throttled?: boolean; busy?: true; usage: Usage } & Availability) // throttled: the provider pushed back (429/529/503+Retry-After); busy: a tier's no capacity (flex)
  | { kind: "timeout"; error: string; usage: Usage }
  | ({ kind: "permanent"; error: string; errorKind: ErrorKind; usage: Usage; quota?: true } & Details & Availability) // quota: the credential's quota is spent (the job pauses)
  | { kind: "crash"; error: string; usage: Usage }
  | { kind: "spawn"; spawn: SubtaskSpawn; usage: Usage } // an agent waits for a child sub-session
  | { kind: "expired"; error: string; usage: Usage } // a batch line the provider's window closed on: an attempt, retried in a later batch
) & {
  rate?: RateObservation; // the answer's rate-limit headers, for the pacer
  serviceTier?: string; // the tier that served it (OpenAI's service_tier)
  deployment?: number; // the pool's deployment that answered
  answer?: AnswerFacts; // what the provider said of its answer (a trace's gen_ai.response.*)
  spans?: SessionSpan[]; // an agent's session: its model and tool calls since its last report (the job's trace)
};

/** The provider's id of an answer, the model it names, why it stopped. */
export interface AnswerFacts {
  id?: string;
  model?: string;
  finish: string;
}

export type NextStep =
  | { step: "succeed"; output: unknown }
  | { step: "fail"; error: string; errorKind: ErrorKind }
  | { step: "retry"; delayMs: number; guidance: string[] | null }
  | { step: "spawn"; spawn: SubtaskSpawn };

/** The contract's backoff after attempt `attempt`: min(0.5·2^(attempt−1), 8) s. */
export function backoffCapMs(attempt: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** (attempt - 1), BACKOFF_MAX_MS);
}

/** The jitter added to a delay: uniform in [0, half the backoff), so simultaneous failures spread out. */
function jitterMs(attempt: number, random: () => number): number {
  return Math.floor((random() * backoffCapMs(attempt)) / 2);
}

/** The contract's backoff (a floor) plus jitter: uniform in [d, 1.5·d). */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return backoffCapMs(attempt) + jitterMs(attempt, random);
}

export function transientDelayMs(attempts: number, retryAfter: number | null, random: () => number): number {
  const base = Math.max(backoffCapMs(attempts), Math.min(retryAfter ?? 0, MAX_RETRY_AFTER_MS));
  return base + jitterMs(attempts, random);
}

/**
 * After a rate-limit answer: wait for the provider's room (not counted against max_retries), or,
 * once the task has waited its max wait since its first throttle in a row, fail `rate_limited`.
 * Call tasks (nextStep) and agent sessions' calls take the same step.
 */
export function afterThrottle(error: string, retryAfterMs: number | null, wait: RateWait, random: () => number = Math.random): NextStep {
  const maxWaitMs = wait.maxWaitMs ?? DEFAULT_MAX_WAIT_SECS * 1000;
  const waited = wait.now - (wait.since ?? wait.now);
  if (waited >= maxWaitMs) {
    return {
      step: "fail",
      error: `Rate limited for ${Math.round(waited / 1000)} s (the job's max_wait_secs is ${maxWaitMs / 1000}): ${error}`,
      errorKind: "rate_limited",
    };
  }
  // The task's nth throttle: its backoff grows to the cap (8 s); a longer Retry-After wins; never past the max wait by much.
  const delayMs = Math.min(transientDelayMs(wait.throttles + 1, retryAfterMs, random), maxWaitMs - waited + 1);
  return { step: "retry", delayMs, guidance: null };
}

/**
 * `attempts` counts the attempt that produced `outcome` (1 for the first); `wait`, the task's
 * rate-limit waits before this outcome (none: every attempt counts against max_retries).
 */
export function nextStep(
  outcome: AttemptOutcome,
  attempts: number,
  maxRetries: number,
  random: () => number = Math.random,
  wait: RateWait | null = null,
): NextStep {
  if (outcome.kind === "success") return { step: "succeed", output: outcome.output };
  if (outcome.kind === "permanent") return { step: "fail", error: outcome.error, errorKind: outcome.errorKind };
  if (outcome.kind === "spawn") return { step: "spawn", spawn: outcome.spawn };
  if (isThrottle(outcome) && wait) return afterThrottle(outcome.error, outcome.retryAfterMs, wait, random);
  const exhausted = attempts - (wait?.throttles ?? 0) >= 1 + maxRetries;
  switch (outcome.kind) {
    case "invalid":
      return exhausted ? { step: "fail", error: outcome.error, errorKind: "validation" } : { step: "retry", delayMs: 0, guidance: outcome.problems };
    case "timeout":
      return exhausted ? { step: "fail", error: outcome.error, errorKind: "timeout" } : { step: "retry", delayMs: 0, guidance: null };
    case "expired":
      return exhausted ? { step: "fail", error: outcome.error, errorKind: "expired" } : { step: "retry", delayMs: 0, guidance: null };
    case "transient":
      return exhausted
        ? { step: "fail", error: outcome.error, errorKind: "llm_error" }
        : { step: "retry", delayMs: transientDelayMs(attempts, outcome.retryAfterMs, random), guidance: null };
    case "crash":
      return exhausted
        ? { step: "fail", error: outcome.error, errorKind: "internal" }
        : { step: "retry", delayMs: backoffMs(attempts, random), guidance: null };
  }
}

/** The prompt of a retry after invalid output: the guidance sentence, then what was wrong. */
export function promptWithGuidance(prompt: string, guidance: string, problems: string[] | null): string {
  if (!problems) return prompt;
  const listed = problems
    .slice(0, 5)
    .map((p) => `- ${p}`)
    .join("\n");
  return `${prompt}\n\n${guidance}${listed ? `\nProblems with your previous response:\n${listed}` : ""}`;
}
