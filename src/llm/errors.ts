/**
 * Failure classification by predicates, not class trees: a provider failure is transient
 * (network, 408, 409, 429, 5xx, Anthropic 529; retried with backoff, honouring Retry-After),
 * a timeout (retried at once), or permanent (400/401/403/404/422…: the item fails with
 * `llm_error` without another attempt). Works for both SDKs' errors and our own.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";

export type FailureClass = "transient" | "timeout" | "permanent";

const TRANSIENT_STATUSES = new Set([408, 409, 429]);
const TIMEOUT_NAMES = new Set(["TimeoutError"]); // DOMException of AbortSignal.timeout
const NETWORK_NAMES = new Set(["FetchError", "TypeError"]); // fetch's own failures

// The SDKs do not set `name` on their errors, so their classes are the reliable mark.
const isSdkTimeout = (e: unknown): boolean =>
  e instanceof OpenAI.APIConnectionTimeoutError || e instanceof Anthropic.APIConnectionTimeoutError;
const isSdkConnectionError = (e: unknown): boolean =>
  e instanceof OpenAI.APIConnectionError || e instanceof Anthropic.APIConnectionError;

/** A failure we raise ourselves (no credential, malformed provider answer…). */
export class ProviderFailure extends Error {
  constructor(
    message: string,
    readonly failureClass: FailureClass,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "ProviderFailure";
  }
}

function* causes(err: unknown): Generator<unknown> {
  let current: unknown = err;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

export function statusOf(err: unknown): number | undefined {
  for (const e of causes(err)) {
    const status = (e as { status?: unknown }).status;
    if (typeof status === "number") return status;
  }
  return undefined;
}

export function isTimeout(err: unknown): boolean {
  for (const e of causes(err)) {
    if (e instanceof ProviderFailure) return e.failureClass === "timeout";
    if (isSdkTimeout(e) || (e instanceof Error && TIMEOUT_NAMES.has(e.name))) return true;
  }
  return false;
}

export function isTransient(err: unknown): boolean {
  if (isTimeout(err)) return false;
  for (const e of causes(err)) if (e instanceof ProviderFailure) return e.failureClass === "transient";
  const status = statusOf(err);
  if (status !== undefined) return TRANSIENT_STATUSES.has(status) || status >= 500;
  // No HTTP status: the request never got an answer (connection refused, reset, DNS).
  for (const e of causes(err)) if (isSdkConnectionError(e) || (e instanceof Error && NETWORK_NAMES.has(e.name))) return true;
  return false;
}

export function classify(err: unknown): FailureClass {
  if (isTimeout(err)) return "timeout";
  return isTransient(err) ? "transient" : "permanent";
}

function headerOf(err: unknown, name: string): string | null {
  for (const e of causes(err)) {
    const headers = (e as { headers?: unknown }).headers;
    if (headers instanceof Headers) return headers.get(name);
    if (headers && typeof headers === "object") {
      const value = (headers as Record<string, unknown>)[name];
      if (typeof value === "string") return value;
    }
  }
  return null;
}

/** The provider's requested wait, from `retry-after-ms` or `Retry-After` (seconds or HTTP date). */
export function retryAfterMs(err: unknown, now = Date.now()): number | undefined {
  for (const e of causes(err)) if (e instanceof ProviderFailure && e.retryAfterMs !== undefined) return e.retryAfterMs;
  const ms = Number(headerOf(err, "retry-after-ms"));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const raw = headerOf(err, "retry-after");
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A message safe to show users: the provider's own message, never keys or stacks. */
export function describeFailure(err: unknown): string {
  const status = statusOf(err);
  const message = err instanceof Error ? err.message : String(err);
  const clean = message.replace(/(sk|key|fo)[-_][A-Za-z0-9_-]{8,}/g, "[redacted]").slice(0, 500);
  return status ? `provider returned ${status}: ${clean}` : clean;
}
