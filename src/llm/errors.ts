/**
 * Failure classification by predicates, not class trees: a provider failure is transient
 * (network, 408, 409, 429, 5xx, Anthropic 529; retried with backoff, honouring Retry-After),
 * a timeout (retried at once), or permanent (400/401/403/404/422…: the item fails with
 * `llm_error` without another attempt). Works for both SDKs' errors and our own.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { DestinationRefused } from "../net/destination";
import type { Unavailable } from "./types";

export type FailureClass = "transient" | "timeout" | "permanent";

const TRANSIENT_STATUSES = new Set([408, 409, 429]);
const TIMEOUT_NAMES = new Set(["TimeoutError"]); // DOMException of AbortSignal.timeout
const NETWORK_NAMES = new Set(["FetchError", "TypeError"]); // fetch's own failures

// The SDKs do not set `name` on their errors, so their classes are the reliable mark.
const isSdkTimeout = (e: unknown): boolean => e instanceof OpenAI.APIConnectionTimeoutError || e instanceof Anthropic.APIConnectionTimeoutError;
const isSdkConnectionError = (e: unknown): boolean => e instanceof OpenAI.APIConnectionError || e instanceof Anthropic.APIConnectionError;

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
  for (const e of causes(err)) {
    if (e instanceof ProviderFailure) return e.failureClass === "transient";
    if (e instanceof DestinationRefused) return false; // the tenant's base URL is refused: no retry helps
  }
  const status = statusOf(err);
  if (status !== undefined) return TRANSIENT_STATUSES.has(status) || status >= 500;
  return neverAnswered(err);
}

/** No HTTP status and a connection failure: the request never got an answer (connection refused, reset, DNS). */
function neverAnswered(err: unknown): boolean {
  for (const e of causes(err)) if (isSdkConnectionError(e) || (e instanceof Error && NETWORK_NAMES.has(e.name))) return true;
  return false;
}

export function classify(err: unknown): FailureClass {
  if (isTimeout(err)) return "timeout";
  if (isQuotaSpent(err)) return "permanent";
  return isTransient(err) ? "transient" : "permanent";
}

/**
 * OpenAI's codes (with `type: "insufficient_quota"`) for a 429 that no wait mends: the credential's
 * credit or spend limit is used up until somebody pays or the month turns. Its `retry-after` can
 * say days; it is not back-pressure.
 */
const QUOTA_CODES = new Set([
  "insufficient_quota",
  "credit_balance_exhausted",
  "organization_spend_limit_exceeded",
  "project_spend_limit_exceeded",
  "organization_usage_limit_exceeded",
]);

/** The error objects of a provider's answer, however the SDK nested them (`{error: {code, type, message}}`, or its body's). */
function errorFields(err: unknown): { code?: unknown; type?: unknown; message?: unknown }[] {
  const found: { code?: unknown; type?: unknown; message?: unknown }[] = [];
  for (const e of causes(err)) {
    for (const f of [e, (e as { error?: unknown }).error, (e as { error?: { error?: unknown } }).error?.error]) {
      if (f && typeof f === "object") found.push(f as { code?: unknown; type?: unknown; message?: unknown });
    }
  }
  return found;
}

/** A 429 that says the credential's quota is spent (OpenAI `insufficient_quota` and its kin), not that calls come too fast. */
export function isQuotaSpent(err: unknown): boolean {
  if (statusOf(err) !== 429) return false;
  return errorFields(err).some(({ code, type }) => (typeof code === "string" && QUOTA_CODES.has(code)) || type === "insufficient_quota");
}

/**
 * Why the model cannot answer at all, if that is what the failure says (../engine/retry-policy.ts
 * `Unavailable`): the quota spent; the model unknown or retired (404: OpenAI's `model_not_found`,
 * Anthropic's `not_found_error` naming the model); no capacity (Anthropic's 529 overloaded,
 * OpenAI's 429 `resource_unavailable` of the flex tier); an outage (a 5xx, or no answer at all). A
 * plain 429 is pacing, not unavailability; a timeout is the call's own.
 */
export function unavailableOf(err: unknown): Unavailable | null {
  if (isTimeout(err)) return null;
  if (isQuotaSpent(err)) return "quota";
  const status = statusOf(err);
  const fields = errorFields(err);
  if (status === 404) {
    const model = fields.some(
      ({ code, type, message }) => code === "model_not_found" || (type === "not_found_error" && typeof message === "string" && message.startsWith("model:")),
    );
    return model ? "model" : null;
  }
  if (status === 529 || (status === 429 && fields.some(({ code }) => code === "resource_unavailable"))) return "capacity";
  if (status !== undefined) return status >= 500 ? "outage" : null;
  return neverAnswered(err) ? "outage" : null;
}

/** A header of the provider's error answer (null: none, or the error is not an answer). */
export function headerOf(err: unknown, name: string): string | null {
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

/** The provider pushes back (429, Anthropic's 529, or a 503 that says when to retry): a signal to send fewer calls at once. */
export function isThrottle(err: unknown): boolean {
  if (isQuotaSpent(err)) return false;
  const status = statusOf(err);
  if (status === 429 || status === 529) return true;
  return status === 503 && retryAfterMs(err) !== undefined;
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

const MAX_PROVIDER_MESSAGE_CHARS = 300;
const ASSIGNED_SECRET = /\b(api[_-]?key|apikey|key|access[_-]?token|token|secret|password|authorization)(["']?\s*[:=]\s*["']?)[^\s"',}]+/gi;
const SECRETS = [
  /\b(sk|pk|rk|fo|key|whsec|sess|tok|token|ghp|gho|xox[abp])[-_][A-Za-z0-9_-]{6,}/gi, // prefixed keys: sk-…, fo_…, whsec_…
  /\bBearer\s+\S+/gi,
  /[A-Za-z0-9+/_-]{32,}={0,2}/g, // long opaque tokens (hex, base64)
];

/** Removes anything that looks like a credential from text we did not write. */
export function redact(text: string): string {
  let out = text.replace(ASSIGNED_SECRET, "$1$2[redacted]").replace(/\/\/[^/\s:@]+:[^/\s@]+@/g, "//[redacted]@");
  for (const pattern of SECRETS) out = out.replace(pattern, "[redacted]");
  return out;
}

/** The provider's own error message, from the parsed error body the SDKs attach (`{error: {message}}` or `{message}`). */
function providerMessage(err: unknown): string | null {
  for (const e of causes(err)) {
    const body = (e as { error?: unknown }).error;
    const candidates = [body, (body as { error?: unknown } | undefined)?.error];
    for (const candidate of candidates) {
      const message = (candidate as { message?: unknown } | undefined)?.message;
      if (typeof message === "string" && message.trim()) return message.trim();
    }
  }
  return null;
}

function cap(text: string): string {
  const clean = redact(text.replace(/\s+/g, " "));
  return clean.length > MAX_PROVIDER_MESSAGE_CHARS ? `${clean.slice(0, MAX_PROVIDER_MESSAGE_CHARS)}…` : clean;
}

/**
 * A message safe to show users: the HTTP status and the provider's own error message (parsed,
 * capped, redacted) — never a raw response body, a key or a stack.
 */
export function describeFailure(err: unknown): string {
  for (const e of causes(err)) {
    if (e instanceof DestinationRefused) return `the provider's base URL was refused: ${e.reason}`;
    if (e instanceof ProviderFailure) return cap(e.message);
  }
  if (isQuotaSpent(err)) {
    const message = providerMessage(err);
    return `the provider's quota for this credential is spent (insufficient_quota; no retry helps until it is topped up)${message ? `: ${cap(message)}` : ""}`;
  }
  const status = statusOf(err);
  if (status !== undefined) {
    const message = providerMessage(err);
    return message ? `provider returned ${status}: ${cap(message)}` : `provider returned ${status}`;
  }
  if (isTimeout(err)) return "the provider did not answer in time";
  if (isTransient(err)) return "could not connect to the provider";
  return `the provider call failed (${err instanceof Error ? err.name : typeof err})`;
}
