/** The request of POST /v1/rank, and the answers its calls are held to. */
import { z } from "@hono/zod-openapi";
import { baseJobFields, callConcurrencyField } from "../base-fields";
import { executionField } from "../execution-field";

export const DEFAULT_RANK_TEMPLATE = "Item:\n{{ item }}";
export const DEFAULT_COMPARISON_TEMPLATE = "Item A:\n{{ item_a }}\n\nItem B:\n{{ item_b }}";
export const MAX_SCORE = 10;

export const RankRequestSchema = z
  .strictObject({
    inputs: z
      .array(z.unknown())
      .min(1, "inputs must hold at least one item")
      .openapi({ description: "The items; each is scored as `item`.", example: ["Paper A", "Paper B", "Paper C"] }),
    criteria: z.string().min(1).openapi({
      description: "What makes an item rank higher, said to the model with every call",
      example: "Most relevant to long-context language modelling",
    }),
    k: z.number().int().min(1).openapi({ description: "How many items the output lists (at most the number of inputs)", example: 2 }),
    prompt_template: z
      .string()
      .min(1)
      .optional()
      .openapi({
        description: `How an item is shown for its score: a Jinja2 template that must read \`item\` (default \`${DEFAULT_RANK_TEMPLATE.replace("\n", "\\n")}\`)`,
      }),
    comparison_template: z
      .string()
      .min(1)
      .optional()
      .openapi({ description: "How two tied items are shown for a comparison: must read `item_a` and `item_b`" }),
    ...baseJobFields,
    ...executionField,
    ...callConcurrencyField,
  })
  .openapi("RankRequest");

export type RankRequest = z.infer<typeof RankRequestSchema>;

export const SCORE_SCHEMA: Record<string, unknown> = {
  type: "object",
  properties: {
    score: { type: "number", minimum: 0, maximum: MAX_SCORE, description: `How well the item meets the criteria, from 0 (not at all) to ${MAX_SCORE} (best)` },
    reason: { type: "string", description: "One short sentence: why" },
  },
  required: ["score"],
  additionalProperties: false,
};

export const COMPARISON_SCHEMA: Record<string, unknown> = {
  type: "object",
  properties: {
    winner: { type: "string", enum: ["A", "B"], description: "The item that better meets the criteria" },
    reason: { type: "string", description: "One short sentence: why" },
  },
  required: ["winner"],
  additionalProperties: false,
};

export const scoreInstruction = (criteria: string) =>
  `You score items against these criteria:\n${criteria}\n\nAnswer with a JSON object: "score" from 0 (does not meet them at all) to ${MAX_SCORE} (meets them best); "reason": one short sentence.`;

export const comparisonInstruction = (criteria: string) =>
  `You compare two items against these criteria:\n${criteria}\n\nAnswer with a JSON object: "winner" is "A" or "B", the item that meets them better; "reason": one short sentence.`;
