/**
 * The one error type of the API. Every failure a handler raises is an ApiError; `app.onError`
 * turns it into the contract's envelope `{"error": {"code", "message", "details"?}}`.
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";

export type ErrorCode =
  | "invalid_request"
  | "invalid_json"
  | "invalid_xml"
  | "template_missing_item"
  | "template_missing_variable"
  | "token_budget_exceeded"
  | "template_syntax"
  | "invalid_output_schema"
  | "unknown_provider"
  | "unauthorized"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "payload_too_large"
  | "unsupported_media_type"
  | "idempotency_mismatch"
  | "rate_limited"
  | "internal";

export interface FieldIssue {
  path: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: ErrorCode;
  readonly details: unknown;
  readonly headers: Record<string, string>;

  constructor(
    status: ContentfulStatusCode,
    code: ErrorCode,
    message: string,
    options: { details?: unknown; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

/**
 * A domain error: input that cannot be used (a template, schema or model name), raised by the
 * modules that parse them wherever they run — routes, Durable Objects, the Queue consumer. Only
 * the edge (app.onError) turns it into an HTTP answer: 400 with its code and details.
 */
export class InputError extends Error {
  readonly code: ErrorCode;
  readonly details: FieldIssue[];

  constructor(code: ErrorCode, message: string, details: FieldIssue[]) {
    super(message);
    this.name = "InputError";
    this.code = code;
    this.details = details;
  }
}

/** A deployment whose configuration cannot work; the edge answers a generic 500. */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError";
}

export const notFound = (what = "resource"): ApiError =>
  new ApiError(404, "not_found", `No such ${what}.`);

export const unsupportedMediaType = (): ApiError =>
  new ApiError(415, "unsupported_media_type", "Send the body as JSON with `Content-Type: application/json`.");

export const unauthorized = (): ApiError =>
  new ApiError(401, "unauthorized", "Missing or invalid credentials.");

export const invalidRequest = (message: string, details: FieldIssue[]): ApiError =>
  new ApiError(400, "invalid_request", message, { details });

export function errorBody(code: ErrorCode, message: string, details?: unknown) {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}
