/** The `cascade` field of filter and classify (./judge.ts runs it). */
import { z } from "@hono/zod-openapi";
import { MAX_FALLBACKS } from "../engine/fallbacks";
import { ModelSchema, SeedSchema } from "../schemas/common";
import { invalidRequest } from "../lib/errors";
import type { CascadeTarget } from "../engine/cascade-target";
import { parseModel } from "../llm/models";

export const DEFAULT_ACCEPT_ABOVE = 0.9;
export const DEFAULT_CONFIDENCE = 0.95;
export const DEFAULT_SAMPLE_SIZE = 200;
const MAX_SAMPLE = 10_000;

const TargetSchema = z
  .strictObject({
    metric: z.enum(["accuracy", "precision", "recall"]).openapi({
      description:
        "Agreement with the job's model (the oracle): `accuracy` (the same answer), `precision` (of the kept, the share the oracle keeps), `recall` (of what the oracle keeps, the share kept). Classify: accuracy only",
    }),
    value: z.number().gt(0).lt(1).openapi({ description: "The least the metric may be, e.g. 0.9" }),
  })
  .openapi("CascadeTarget");

const SampleSchema = z
  .union([
    z.strictObject({
      size: z
        .number()
        .int()
        .min(1)
        .max(MAX_SAMPLE)
        .openapi({ description: `How many items the oracle also answers (at most ${MAX_SAMPLE}; at most the items)` }),
    }),
    z.strictObject({ fraction: z.number().gt(0).max(1).openapi({ description: "That share of the items, rounded up" }) }),
  ])
  .openapi("CascadeSample");

export const CascadeSchema = z
  .strictObject({
    model: ModelSchema.openapi({ description: "The cheaper model that answers every item first, with a confidence" }),
    fallbacks: z
      .array(ModelSchema)
      .max(MAX_FALLBACKS)
      .optional()
      .openapi({ description: `The cheaper model's own fallback chain (at most ${MAX_FALLBACKS}), as the job's \`fallbacks\` are for the job's model` }),
    accept_above: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .openapi({
        description: `Fixed thresholds (default ${DEFAULT_ACCEPT_ABOVE}): its answer is the item's when its confidence is at least this. Not with \`target\``,
      }),
    reject_below: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .openapi({ description: "Filter only (default 0.1): the item is dropped when the confidence that it should be kept is at most this. Not with `target`" }),
    target: TargetSchema.optional().openapi({
      description:
        "Learn the thresholds instead, with a guarantee: with probability at least `confidence`, the final answers agree with the job's model's on `metric` at least at `value`",
    }),
    confidence: z.number().gt(0).lt(1).optional().openapi({ description: "With `target` (default 0.95): the probability the guarantee holds" }),
    sample: SampleSchema.optional().openapi({
      description: `With \`target\` (default {"size": ${DEFAULT_SAMPLE_SIZE}}): the uniform random sample of items the job's model also answers; their answers are the oracle's`,
    }),
    score: z.enum(["logprobs", "self_reported"]).optional().openapi({
      description:
        "How the cheaper answer's confidence is read: `logprobs`, the probability its tokens give its answer (OpenAI and OpenAI-compatible servers; a model that refuses them answers with `self_reported`); `self_reported`, the confidence the model states. Default: logprobs where the provider has them, else self_reported. Batch lines are always self_reported",
    }),
    seed: SeedSchema.optional().openapi({
      description: "With `target`: the same seed draws the same sample (default: one drawn at submission, shown in `output.cascade.seed`)",
    }),
  })
  .openapi("Cascade", {
    description:
      "A model cascade: the cheaper model answers every item first; only the items it is unsure of go on to the job's `model`. Each result says `decided_by` (`cascade`, `model`, or `sample` with a target); the `cascade` stage holds the cheaper calls and their usage, the `sample` stage the oracle's sampled calls.",
    example: { model: "openai/gpt-6-luna", target: { metric: "accuracy", value: 0.9 }, confidence: 0.95, sample: { size: 200 }, seed: 7 },
  });

export type CascadeRequest = z.infer<typeof CascadeSchema>;

/** 400 unless the thresholds leave the job's model something to decide. */
export function checkThresholds(acceptAbove: number, rejectBelow: number | null): void {
  if (rejectBelow !== null && rejectBelow >= acceptAbove) {
    throw invalidRequest("cascade.reject_below must be under cascade.accept_above.", [
      { path: "cascade.reject_below", message: `${rejectBelow} is not under accept_above ${acceptAbove}` },
    ]);
  }
}

const LOGPROB_PROVIDERS = new Set(["openai", "openai-compatible"]);

/** Whether the cheaper calls ask for log-probabilities (`score`); 400 for `logprobs` on a provider that has none. */
export function scoresByLogprobs(cascade: CascadeRequest): boolean {
  const provider = parseModel(cascade.model).provider;
  const has = LOGPROB_PROVIDERS.has(provider);
  if (cascade.score === "logprobs" && !has) {
    throw invalidRequest(`${provider} answers carry no token log-probabilities: use score "self_reported".`, [
      { path: "cascade.score", message: `not available for ${provider}` },
    ]);
  }
  return has && cascade.score !== "self_reported";
}

/** The cascade's learning target, or null for fixed thresholds; 400 when both are asked for, or a target's fields come without one. */
export function cascadeTarget(cascade: CascadeRequest, metrics: readonly CascadeTarget["metric"][]): CascadeTarget | null {
  const path = (field: string) => `cascade.${field}`;
  if (!cascade.target) {
    const stray = (["confidence", "sample", "seed"] as const).filter((f) => cascade[f] !== undefined);
    if (stray.length > 0)
      throw invalidRequest(
        `cascade.${stray[0]} goes with cascade.target.`,
        stray.map((f) => ({ path: path(f), message: "only with a target" })),
      );
    return null;
  }
  const fixed = (["accept_above", "reject_below"] as const).filter((f) => cascade[f] !== undefined);
  if (fixed.length > 0)
    throw invalidRequest(
      "A cascade takes fixed thresholds or a target, not both.",
      fixed.map((f) => ({ path: path(f), message: "not with cascade.target" })),
    );
  if (!metrics.includes(cascade.target.metric)) {
    throw invalidRequest(`This operator's cascade target is ${metrics.join(" or ")}.`, [
      { path: path("target.metric"), message: `${cascade.target.metric} is not one of ${metrics.join(", ")}` },
    ]);
  }
  const sample = cascade.sample ?? { size: DEFAULT_SAMPLE_SIZE };
  return {
    metric: cascade.target.metric,
    value: cascade.target.value,
    confidence: cascade.confidence ?? DEFAULT_CONFIDENCE,
    sample: "size" in sample ? { size: sample.size } : { fraction: sample.fraction },
    seed: cascade.seed ?? Math.floor(Math.random() * 2 ** 31),
  };
}

/** How many items the sample holds for a stage of `total` items. */
export function sampleSizeOf(sample: CascadeTarget["sample"], total: number): number {
  return Math.min(total, "size" in sample ? sample.size : Math.ceil(sample.fraction * total));
}

/** The cheaper call's own fallbacks, as a call spec's field (none: none). */
export const cascadeFallbacks = (cascade: { fallbacks?: string[] }): { fallbacks?: string[] } =>
  cascade.fallbacks?.length ? { fallbacks: cascade.fallbacks } : {};
