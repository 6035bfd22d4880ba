/** Request and response schemas of POST /v1/map and of map results. */
import { z } from "@hono/zod-openapi";
import { ModelSchema, TimeoutSecsSchema } from "./common";
import { MAX_URL_CHARS } from "../net/destination";
import { TokenBudgetSchema } from "../operators/budget-schema";

export const DEFAULT_RETRY_GUIDANCE =
  "Your previous response was not valid JSON. Return only a JSON object matching the required schema.";

export const WebhookSchema = z
  .strictObject({
    url: z.url().max(MAX_URL_CHARS).openapi({ example: "https://example.com/hooks/fanout" }),
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/=]+$/, "must look like whsec_<base64>")
      .optional(),
  })
  .openapi("WebhookConfig");

export const MapRequestSchema = z
  .strictObject({
    inputs: z.array(z.unknown()).min(1, "inputs must hold at least one item").openapi({
      description: "The items; each is rendered into the template as `item`.",
      example: [{ title: "Attention is all you need" }],
    }),
    prompt_template: z.string().min(1).openapi({
      description: "A Jinja2 template that must read the variable `item`.",
      example: "Extract metadata: {{ item.title }}",
    }),
    output_schema: z.record(z.string(), z.unknown()).nullish().openapi({
      description: "JSON Schema (2020-12 or draft-07) every output must match. Omitted: `output` is the text.",
      example: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
    }),
    model: ModelSchema,
    system_prompt: z.string().nullish(),
    temperature: z.number().min(0).max(2).nullish().default(0),
    max_tokens: z.number().int().positive().nullish(),
    timeout_secs: TimeoutSecsSchema.default(60),
    max_retries: z.number().int().min(0).max(10).default(3),
    concurrency: z.number().int().min(1).max(128).default(16),
    retry_guidance: z.string().min(1).default(DEFAULT_RETRY_GUIDANCE),
    webhook: WebhookSchema.nullish(),
    metadata: z.record(z.string(), z.unknown()).default({}),
    token_budget: TokenBudgetSchema.nullish(),
  })
  .openapi("MapRequest");

export type MapRequest = z.infer<typeof MapRequestSchema>;

export const UsageSchema = z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }).openapi("Usage");

export const ErrorKindSchema = z
  .enum(["timeout", "validation", "llm_error", "schema_error", "internal"])
  .nullable()
  .openapi("ErrorKind", { description: "Why an item failed; null on success" });

export const MapResultSchema = z
  .object({
    index: z.number().int(),
    input: z.unknown(),
    output: z.unknown(),
    success: z.boolean(),
    error: z.string().nullable(),
    error_kind: ErrorKindSchema,
    attempts: z.number().int(),
    usage: UsageSchema,
  })
  .openapi("MapResult");

export type MapResult = z.infer<typeof MapResultSchema>;

export const JobCreatedSchema = z
  .object({
    job_id: z.string(),
    status: z.string(),
    total: z.number().int(),
    links: z.object({ self: z.string(), events: z.string(), results: z.string() }),
  })
  .openapi("JobCreated");
