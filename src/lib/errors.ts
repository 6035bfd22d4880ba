/**
 * The one error type of the API. Every failure a handler raises is an ApiError; `app.onError`
 * turns it into the contract's envelope `{"error": {"code", "message", "details"?}}`.
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Every error code of the API's envelope, with what it means (the docs are generated from this). */
export const ERROR_CODES = {
  invalid_request: "400: a field is missing, of the wrong type, out of bounds or unknown; `details` lists each problem at its path",
  invalid_json: "400: the body is not JSON",
  invalid_xml:
    "400: a POST /v1/pipelines body sent as XML is not well-formed (or has a DOCTYPE, a reference to no character, or is over its depth, element or attribute bounds)",
  template_missing_item: "400: a map or agentic template never reads `item`",
  template_missing_variable: "400: a template never reads a variable its operator provides it for (`accumulator`, `items`, a batch alias, …)",
  token_budget_exceeded:
    "422: the dry-run estimate is over `token_budget.total` (or its dollars over `token_budget.usd`); `details` has the estimate and suggestions",
  unsupported_execution_mode:
    "400: `execution.mode` `batch` for a model whose provider has no batch API (openai-compatible, workers-ai); `auto` runs those realtime",
  too_many_comparisons: "422: a resolve job's blocking would compare more pairs than `max_comparisons`; `details` has the count and a suggestion",
  template_syntax: "400: a template does not parse",
  unsupported_template_feature:
    "400: a template names a filter or test the renderer does not have (the list of those it has is below); refused at submission, never item by item",
  invalid_output_schema: "400: `output_schema` is not a valid JSON Schema",
  model_retired:
    "400: a model of the job is past the shutdown date its provider announced; `details.replacement` names the model the provider recommends (when it named one)",
  unknown_provider: "400: the model's provider is not openai, anthropic, openai-compatible or workers-ai",
  unauthorized: "401: no API key, an unknown or revoked one (or a wrong admin token)",
  not_found: "404: no such route, job, session or tenant (another tenant's job is not found either)",
  method_not_allowed: "405: the route exists with another method",
  conflict: "409: the job is not in a state that allows this (recover, resume, delete, batch)",
  payload_too_large: "413: the body, an item or one field is over its size cap",
  unsupported_media_type: "415: a body that is not JSON (POST /v1/pipelines also takes application/xml)",
  idempotency_mismatch: "422: the Idempotency-Key was used with another body",
  rate_limited: "429: too many of the tenant's jobs are queued or running (Retry-After says when to try again)",
  internal: "500: an unexpected failure (logged); nothing about it is shown",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

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

export const notFound = (what = "resource"): ApiError => new ApiError(404, "not_found", `No such ${what}.`);

export const unsupportedMediaType = (): ApiError => new ApiError(415, "unsupported_media_type", "Send the body as JSON with `Content-Type: application/json`.");

export const unauthorized = (): ApiError => new ApiError(401, "unauthorized", "Missing or invalid credentials.");

export const invalidRequest = (message: string, details: FieldIssue[]): ApiError => new ApiError(400, "invalid_request", message, { details });

export function errorBody(code: ErrorCode, message: string, details?: unknown) {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}
