/** The rate limits a job or a tenant declares (contract v3, "Pacing by the provider's limits"). */
import { z } from "@hono/zod-openapi";
import { PROTOTYPE_NAMES } from "../lib/records";

export const MAX_RPM = 10_000_000;
export const MAX_TPM = 10_000_000_000;
const MAX_DECLARED_MODELS = 100;

export const RateLimitSchema = z
  .strictObject({
    rpm: z.number().int().min(1).max(MAX_RPM).nullish().openapi({ description: "Requests per minute" }),
    tpm: z
      .number()
      .int()
      .min(1)
      .max(MAX_TPM)
      .nullish()
      .openapi({ description: "Tokens per minute, counted as the provider counts them (OpenAI: prompt + max_tokens; Anthropic: input tokens)" }),
  })
  .refine((l) => (l.rpm ?? null) !== null || (l.tpm ?? null) !== null, { message: "give rpm, tpm or both" })
  .openapi("RateLimit");

/** A record's prototype names would be dropped by the parse without a word: they are refused before it. */
const withoutPrototypeNames = (value: unknown, ctx: { addIssue(issue: { code: "custom"; message: string; path?: PropertyKey[]; input?: unknown }): void }) => {
  if (typeof value !== "object" || value === null) return value;
  for (const name of Object.keys(value))
    if (PROTOTYPE_NAMES.has(name)) ctx.addIssue({ code: "custom", path: [name], message: "not a model name", input: value });
  return value;
};

export const RateLimitsSchema = z
  .preprocess(
    withoutPrototypeNames,
    z
      .record(z.string().min(1).max(200), RateLimitSchema)
      .refine((limits) => Object.keys(limits).length <= MAX_DECLARED_MODELS, { message: `at most ${MAX_DECLARED_MODELS} models` }),
  )
  .openapi("RateLimits", {
    description:
      "This key's rate limits per model name (the name after the provider), or `*` for every model without its own entry: the tier's limits, so calls are paced to them from the first one",
    example: { "*": { rpm: 500, tpm: 200_000 } },
  });

/** The job's own limit: it may only lower the pace of its calls. */
export const rateLimitField = {
  rate_limit: RateLimitSchema.nullish().openapi({
    description: "Pace this job's calls to at most these rates (it only lowers the provider's limits, never raises them)",
  }),
};
