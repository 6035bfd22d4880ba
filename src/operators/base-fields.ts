/**
 * The request fields every job-creating POST shares, defined once: each operator's schema spreads
 * them and adds its own. Defaults and bounds are the contract's.
 */
import { z } from "@hono/zod-openapi";
import { rateLimitField } from "../schemas/pacing";
import { ModelSchema, TimeoutSecsSchema } from "../schemas/common";
import { MAX_URL_CHARS } from "../net/destination";
import { TokenBudgetSchema } from "./budget-schema";
import { MAX_CACHE_TTL_SECS } from "../cache/response-cache";
import { DEFAULT_MAX_WAIT_SECS, MAX_MAP_CONCURRENCY } from "../engine/limits";
import { MAX_FALLBACKS } from "../engine/fallbacks";

export const DEFAULT_RETRY_GUIDANCE = "Your previous response was not valid JSON. Return only a JSON object matching the required schema.";

export const WebhookSchema = z
  .strictObject({
    url: z.url().max(MAX_URL_CHARS).openapi({ example: "https://example.com/hooks/fanout" }),
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/=]+$/, "must look like whsec_<base64>")
      .optional(),
  })
  .openapi("WebhookConfig");

export const JsonSchemaField = z.record(z.string(), z.unknown()).nullish();

/** Fields of one model call that a task may set for itself (the request's values are the defaults). */
export const callOverrideFields = {
  model: ModelSchema.optional(),
  fallbacks: z
    .array(ModelSchema)
    .max(MAX_FALLBACKS)
    .optional()
    .openapi({
      description: `This call's own fallback chain (contract v4): models its next attempt goes to, in order, when its model is unavailable — as the job's \`fallbacks\` for the job's model; at most ${MAX_FALLBACKS}. Absent: on the job's model, the job's fallbacks; on a model of its own, none`,
    }),
  system_prompt: z.string().nullish(),
  output_schema: JsonSchemaField,
  max_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
};

/** The response cache, opt-in per job; for operators whose tasks are single model calls. */
export const CacheSchema = z
  .strictObject({
    ttl_secs: z
      .number()
      .int()
      .min(1)
      .max(MAX_CACHE_TTL_SECS)
      .openapi({ description: `How old a cached answer may be, in seconds (1–${MAX_CACHE_TTL_SECS}: 30 days)` }),
  })
  .openapi("CacheConfig", {
    description:
      "Reuse this tenant's earlier validated answer to an identical call (model, endpoint, system prompt, rendered prompt, output schema, temperature, max_tokens) made within ttl_secs: no tokens spent, the result says `cached: true`, and the job's usage counts it under `cached`. Never shared across tenants. Agent calls are never cached.",
    example: { ttl_secs: 86400 },
  });

/** Every operator's fields. */
export const sharedJobFields = {
  model: ModelSchema,
  system_prompt: z.string().nullish(),
  max_tokens: z.number().int().positive().nullish(),
  timeout_secs: TimeoutSecsSchema.default(60),
  max_retries: z.number().int().min(0).max(10).default(3),
  webhook: WebhookSchema.nullish(),
  metadata: z.record(z.string(), z.unknown()).default({}),
  token_budget: TokenBudgetSchema.nullish(),
  fallbacks: z
    .array(ModelSchema)
    .max(MAX_FALLBACKS)
    .default([])
    .openapi({
      description: `Models an item's next attempt goes to, in order, when the job's model is unavailable: an outage (5xx or no answer), no capacity (529; OpenAI's 429 resource_unavailable), the model unknown or retired (404 model_not_found), or the credential's quota spent (429 insufficient_quota). At most ${MAX_FALLBACKS}, each with its own credential, pacing, prompt cache and price; a result says \`model\`, the one that answered. Invalid output never falls back. Realtime call stages on the job's model take them (a provider batch's lines and agent sessions keep their one model).`,
      example: ["anthropic/claude-sonnet-4-6"],
    }),
  name: z
    .string()
    .max(200)
    .refine((name) => ![...name].some((ch) => ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 127), "no control characters")
    .nullish()
    .openapi({
      description: "A name for people (at most 200 characters): returned on the job and the job list, shown in the dashboard",
      example: "Q3 support tickets",
    }),
};

/** The provider's prompt cache, for operators whose tasks are single model calls (contract v3, "Prompt caching"). */
export const promptCacheField = {
  prompt_cache: z.boolean().default(true).openapi({
    description:
      "Anthropic: mark the shared prefix of a stage's calls (the system prompt and the template's text before its first variable) with `cache_control` when it reaches the model's minimum cacheable length, so repeated prefixes are billed at the cache-read price. OpenAI caches prefixes by itself. false: never mark.",
  }),
};

/** How long a call task may wait on the provider's rate limits (a 429 is back-pressure, not a failure). */
export const maxWaitField = {
  max_wait_secs: z.number().int().min(1).max(86_400).default(DEFAULT_MAX_WAIT_SECS).openapi({
    description:
      "A rate-limit answer (429, 529, or 503 with retry-after) is back-pressure: the task waits for the provider's room and retries without using up `max_retries` (`attempts` counts every call sent). It fails with `error_kind: rate_limited` only once it has waited this long, in seconds, since its first rate-limit answer in a row.",
  }),
};

/** Calls in flight for the operators of one call per item (map, the semantic operators, evaluations), each a call worker of its own: up to MAX_MAP_CONCURRENCY. */
export const concurrencySchema = (description: string) => z.number().int().min(1).max(MAX_MAP_CONCURRENCY).default(16).openapi({ description });

export const callConcurrencyField = { concurrency: concurrencySchema(`Model calls in flight at most (1–${MAX_MAP_CONCURRENCY})`) };

/** The fields of operators of one model call per task (map, reduce): the shared ones and theirs. */
export const baseJobFields = {
  ...sharedJobFields,
  ...maxWaitField,
  ...rateLimitField,
  temperature: z.number().min(0).max(2).nullish().default(0),
  concurrency: z.number().int().min(1).max(128).default(16),
  retry_guidance: z.string().min(1).default(DEFAULT_RETRY_GUIDANCE),
  cache: CacheSchema.nullish(),
  ...promptCacheField,
};

/** The request fields every operator's submission reads (parsed: defaults applied). */
export interface CommonJobRequest {
  model: string;
  max_retries: number;
  /** How long a call may wait on rate limits (the coordinator's call tasks; agent sessions' calls). */
  max_wait_secs?: number;
  rate_limit?: { rpm?: number | null; tpm?: number | null } | null;
  concurrency: number;
  webhook?: { url: string; secret?: string } | null;
  metadata: Record<string, unknown>;
  name?: string | null;
  token_budget?: { total?: number; usd?: number; on_exhausted: "pause" | "fail" } | null;
  fallbacks?: string[];
  cache?: { ttl_secs: number } | null;
  prompt_cache?: boolean;
  execution?: { mode: "realtime" | "batch" | "auto" | "flex"; deadline_secs: number };
}
