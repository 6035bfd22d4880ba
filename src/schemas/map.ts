/** Request and response schemas of POST /v1/map and of map results. */
import { z } from "@hono/zod-openapi";
import { baseJobFields, concurrencySchema } from "../operators/base-fields";
import { BEGINS_PER_INVOCATION, MAX_MAP_CONCURRENCY } from "../engine/limits";
import { ERROR_KINDS } from "../engine/types";
import { executionField } from "../operators/execution-field";
import { ModelWarningSchema } from "./warnings";

export { DEFAULT_RETRY_GUIDANCE, WebhookSchema } from "../operators/base-fields";

export const MapRequestSchema = z
  .strictObject({
    inputs: z
      .array(z.unknown())
      .min(1, "inputs must hold at least one item")
      .openapi({
        description: "The items; each is rendered into the template as `item`.",
        example: [{ title: "Attention is all you need" }],
      }),
    prompt_template: z.string().min(1).openapi({
      description: "A Jinja2 template that must read the variable `item`.",
      example: "Extract metadata: {{ item.title }}",
    }),
    output_schema: z
      .record(z.string(), z.unknown())
      .nullish()
      .openapi({
        description: "JSON Schema (2020-12 or draft-07) every output must match. Omitted: `output` is the text.",
        example: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
      }),
    ...baseJobFields,
    ...executionField,
    concurrency: concurrencySchema(
      `Model calls in flight at most (1–${MAX_MAP_CONCURRENCY}): each is a worker object of its own, started in waves of at most ${BEGINS_PER_INVOCATION} per invocation of the job's coordinator`,
    ),
  })
  .openapi("MapRequest");

export type MapRequest = z.infer<typeof MapRequestSchema>;

export const UsageSchema = z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }).openapi("Usage");

/** Usage of model calls (contract v3): the provider's prompt-cache tokens are parts of input_tokens. */
export const CallUsageSchema = UsageSchema.extend({
  cached_input_tokens: z
    .number()
    .int()
    .openapi({ description: "Of input_tokens: read from the provider's prompt cache (OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`)" }),
  cache_write_input_tokens: z
    .number()
    .int()
    .openapi({ description: "Of input_tokens: written to the provider's prompt cache (Anthropic `cache_creation_input_tokens`)" }),
}).openapi("CallUsage");

export const CostUsdSchema = z
  .number()
  .nullable()
  .openapi({ description: "US dollars at the shipped or deployment prices (batch calls at the batch discount); null when a call used a model with no price" });

export const ErrorKindSchema = z.enum(ERROR_KINDS).nullable().openapi("ErrorKind", { description: "Why an item failed; null on success" });

/** What a result says of the call that answered it (a map's and a staged job's results alike). */
export const answerFields = {
  cached: z.boolean().optional().openapi({ description: "Present and true when the output came from the response cache (usage is then zero)" }),
  model: z
    .string()
    .optional()
    .openapi({ description: "The model that answered (or was tried last), on a job with `fallbacks`: its own or one of its fallbacks" }),
  service_tier: z.string().optional().openapi({
    description:
      "The provider's tier that served the answering call, as it reports it (OpenAI's `service_tier`: `default`, `flex`…), on a call that asked for flex or whose provider says; `flex` is priced at the batch rates",
  }),
};

export const MapResultSchema = z
  .object({
    index: z.number().int(),
    input: z.unknown(),
    output: z.unknown(),
    success: z.boolean(),
    error: z.string().nullable(),
    error_kind: ErrorKindSchema,
    attempts: z.number().int(),
    usage: CallUsageSchema,
    cost_usd: CostUsdSchema,
    ...answerFields,
  })
  .openapi("MapResult");

export type MapResult = z.infer<typeof MapResultSchema>;

export const JobCreatedSchema = z
  .object({
    job_id: z.string(),
    status: z.string(),
    total: z.number().int(),
    links: z.object({ self: z.string(), events: z.string(), results: z.string() }),
    warnings: z.array(ModelWarningSchema).openapi({ description: "A model of the job that shuts down within 30 days or before its deadline (empty: none)" }),
  })
  .openapi("JobCreated");
