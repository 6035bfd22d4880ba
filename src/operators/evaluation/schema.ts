/** The request of POST /v1/evaluations (contract v4, "Evaluations"), and what its judge calls answer. */
import { z } from "@hono/zod-openapi";
import { baseJobFields, concurrencySchema } from "../base-fields";
import { MAX_MAP_CONCURRENCY } from "../../engine/limits";
import { executionField } from "../execution-field";
import { ModelSchema, SeedSchema } from "../../schemas/common";

export const MAX_CRITERIA = 20;
export const MAX_EVAL_SAMPLE = 5_000;
export const MAX_GOLD = 10_000;
export const DEFAULT_EVAL_SAMPLE = 100;

const CriterionSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_ .-]*$/, "letters, digits, spaces, _ . - (not starting with a space, . or -)")
      .openapi({ description: "How the verdicts and the pass rates name it", example: "faithful" }),
    description: z
      .string()
      .min(1)
      .max(2_000)
      .openapi({ description: "What passing means, said to the judge", example: "Every fact in the answer is in the input" }),
  })
  .openapi("EvaluationCriterion");

const jobFields = Object.fromEntries(Object.entries(baseJobFields).filter(([field]) => field !== "model")) as Omit<typeof baseJobFields, "model">; // the judge's model is the job's

export const EvaluationRequestSchema = z
  .strictObject({
    job_id: z.string().min(1).max(100).openapi({ description: "The finished job whose results are evaluated (yours; it is never changed)" }),
    judge: z
      .strictObject({
        model: ModelSchema.openapi({ description: "The judge model" }),
        criteria: z
          .array(CriterionSchema)
          .min(1)
          .max(MAX_CRITERIA)
          .openapi({ description: `What the judge checks each sampled result for (1–${MAX_CRITERIA}, unique names); each answered {pass, reason}` }),
      })
      .optional()
      .openapi({ description: "A judge over a sample of the results: each call sees the item's input and its output (or its error)" }),
    gold: z
      .array(z.strictObject({ index: z.number().int().min(0), expected: z.unknown() }))
      .min(1)
      .max(MAX_GOLD)
      .optional()
      .openapi({
        description: `Expected outputs by item index (at most ${MAX_GOLD}), compared with the results without a model call: filter \`keep\` (a boolean, or {keep}); classify the label (or the set of labels); any other job the output, field by field when it is an object`,
      }),
    compare: z
      .strictObject({ job_id_b: z.string().min(1).max(100) })
      .optional()
      .openapi({
        description:
          "A/B: the judge prefers this job's answer (B) or the evaluated job's (A) for each sampled item, asked in both orders; two orders that disagree are a tie. Both jobs must have the same inputs",
      }),
    sample: z
      .strictObject({
        size: z
          .number()
          .int()
          .min(1)
          .max(MAX_EVAL_SAMPLE)
          .default(DEFAULT_EVAL_SAMPLE)
          .openapi({ description: `How many results the judge sees (at most ${MAX_EVAL_SAMPLE}; at most the results)` }),
        seed: SeedSchema.optional().openapi({ description: "The same seed draws the same sample (default: one drawn at submission, in the output)" }),
      })
      .default({ size: DEFAULT_EVAL_SAMPLE })
      .openapi({ description: "The seeded uniform sample of results the judge sees" }),
    confidence: z.number().gt(0).lt(1).default(0.95).openapi({ description: "Of the Wilson intervals around every rate (default 0.95)" }),
    ...jobFields,
    ...executionField,
    concurrency: concurrencySchema(`Judge calls in flight at most (1–${MAX_MAP_CONCURRENCY})`),
  })
  .openapi("EvaluationRequest", {
    example: {
      job_id: "job_…",
      judge: { model: "openai/gpt-6-sol", criteria: [{ name: "faithful", description: "Every fact in the answer is in the input" }] },
      sample: { size: 100, seed: 1 },
    },
  });

export type EvaluationRequest = z.infer<typeof EvaluationRequestSchema>;

/** What a judge call answers: every criterion's verdict. */
export function verdictSchema(names: string[]): Record<string, unknown> {
  const verdict = {
    type: "object",
    properties: { pass: { type: "boolean" }, reason: { type: "string", description: "One short sentence: why" } },
    required: ["pass", "reason"],
    additionalProperties: false,
  };
  return {
    type: "object",
    properties: { verdicts: { type: "object", properties: Object.fromEntries(names.map((n) => [n, verdict])), required: names, additionalProperties: false } },
    required: ["verdicts"],
    additionalProperties: false,
  };
}

export const PREFERENCE_SCHEMA: Record<string, unknown> = {
  type: "object",
  properties: {
    winner: { type: "string", enum: ["A", "B", "tie"], description: "The better answer, or tie" },
    reason: { type: "string", description: "One short sentence: why" },
  },
  required: ["winner"],
  additionalProperties: false,
};

export const judgeInstruction = (criteria: { name: string; description: string }[]) =>
  `You judge one answer to one task against these criteria:\n${criteria.map((c) => `- ${c.name}: ${c.description}`).join("\n")}\n\nAnswer with a JSON object: "verdicts" holds, for every criterion by its name, {"pass": true or false, "reason": one short sentence}.`;

export const compareInstruction = (criteria: { name: string; description: string }[]) =>
  `You compare two answers, A and B, to one task against these criteria:\n${criteria.map((c) => `- ${c.name}: ${c.description}`).join("\n")}\n\nAnswer with a JSON object: "winner" is "A", "B" or "tie"; "reason": one short sentence.`;

/** A value as the judge reads it: text as it is, anything else as JSON. */
const shown = (name: string) => `{% if ${name} is string %}{{ ${name} }}{% else %}{{ ${name} | tojson }}{% endif %}`;

export const JUDGE_TEMPLATE = `The task's input:\n${shown("item.input")}\n\n{% if item.success %}The answer:\n${shown("item.output")}{% else %}The task failed: {{ item.error }}{% endif %}`;

export const COMPARE_TEMPLATE = `The task's input:\n${shown("item.input")}\n\nAnswer A:\n${shown("item.a")}\n\nAnswer B:\n${shown("item.b")}`;
