/**
 * What happens after one attempt of one item. Pure, so the policy is tested on its own:
 * - invalid output (unparseable JSON, schema mismatch) → retry at once with guidance;
 * - transient provider error → retry after min(0.5·2^(attempt−1), 8) s, or Retry-After if longer;
 * - timeout → counts as an attempt, retried at once;
 * - permanent error → the item fails now;
 * - crash (the attempt threw inside the worker, or its worker was lost) → counts as an attempt,
 *   retried after the backoff; the last one fails the item with `internal`.
 * An item makes at most 1 + max_retries attempts; the last failure decides `error_kind`.
 */
import type { Usage } from "../llm/types";
import type { AgentItemResult } from "../agent/result";

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_MAX_MS = 8_000;

export type ErrorKind = "timeout" | "validation" | "llm_error" | "schema_error" | "internal";

export type AttemptOutcome =
  | { kind: "success"; output: unknown; usage: Usage }
  | { kind: "invalid"; error: string; problems: string[]; usage: Usage }
  | { kind: "transient"; error: string; retryAfterMs: number | null; usage: Usage }
  | { kind: "timeout"; error: string; usage: Usage }
  | { kind: "permanent"; error: string; errorKind: ErrorKind; usage: Usage }
  | { kind: "crash"; error: string; usage: Usage }
  | { kind: "agent"; result: AgentItemResult; usage: Usage }; // a finished sub-session: no retry here

export type NextStep =
  | { step: "succeed"; output: unknown }
  | { step: "fail"; error: string; errorKind: ErrorKind }
  | { step: "retry"; delayMs: number; guidance: string[] | null };

export function backoffMs(attempt: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** (attempt - 1), BACKOFF_MAX_MS);
}

/** `attempts` counts the attempt that produced `outcome` (1 for the first). */
export function nextStep(outcome: AttemptOutcome, attempts: number, maxRetries: number): NextStep {
  if (outcome.kind === "success") return { step: "succeed", output: outcome.output };
  if (outcome.kind === "agent") {
    const r = outcome.result;
    return r.success ? { step: "succeed", output: r.output_text } : { step: "fail", error: r.error ?? "failed", errorKind: r.error_kind ?? "llm_error" };
  }
  if (outcome.kind === "permanent") return { step: "fail", error: outcome.error, errorKind: outcome.errorKind };
  const exhausted = attempts >= 1 + maxRetries;
  switch (outcome.kind) {
    case "invalid":
      return exhausted
        ? { step: "fail", error: outcome.error, errorKind: "validation" }
        : { step: "retry", delayMs: 0, guidance: outcome.problems };
    case "timeout":
      return exhausted
        ? { step: "fail", error: outcome.error, errorKind: "timeout" }
        : { step: "retry", delayMs: 0, guidance: null };
    case "transient":
      return exhausted
        ? { step: "fail", error: outcome.error, errorKind: "llm_error" }
        : { step: "retry", delayMs: Math.max(backoffMs(attempts), outcome.retryAfterMs ?? 0), guidance: null };
    case "crash":
      return exhausted
        ? { step: "fail", error: outcome.error, errorKind: "internal" }
        : { step: "retry", delayMs: backoffMs(attempts), guidance: null };
  }
}

/** The prompt of a retry after invalid output: the guidance sentence, then what was wrong. */
export function promptWithGuidance(prompt: string, guidance: string, problems: string[] | null): string {
  if (!problems) return prompt;
  const listed = problems.slice(0, 5).map((p) => `- ${p}`).join("\n");
  return `${prompt}\n\n${guidance}${listed ? `\nProblems with your previous response:\n${listed}` : ""}`;
}
