/** The request of POST /v1/filter (and the shape of a filter result's output). */
import { z } from "@hono/zod-openapi";
import { baseJobFields, callConcurrencyField } from "../base-fields";
import { CascadeSchema } from "../cascade-field";
import { executionField } from "../execution-field";

export const FilterRequestSchema = z
  .strictObject({
    inputs: z
      .array(z.unknown())
      .min(1, "inputs must hold at least one item")
      .openapi({
        description: "The items; each is rendered into the predicate as `item`.",
        example: [{ title: "Attention is all you need", abstract: "…" }],
      }),
    predicate_template: z.string().min(1).openapi({
      description:
        'A Jinja2 template that must read `item`: the condition an item must meet to be kept, with the item. The model answers `{"keep": bool, "reason"}`.',
      example: "Is this paper about machine translation? {{ item.title }}: {{ item.abstract }}",
    }),
    cascade: CascadeSchema.nullish(),
    ...baseJobFields,
    ...executionField,
    ...callConcurrencyField,
  })
  .openapi("FilterRequest");

export type FilterRequest = z.infer<typeof FilterRequestSchema>;

/** What the model is asked for, and what each result's `output` is (a cascade's answer must say its `confidence`). */
export function keepSchema(
  withConfidence: boolean,
  field = "keep",
  described = "true when the item meets the condition, false when it does not",
): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    [field]: { type: "boolean", description: described },
    reason: { type: "string", description: "One short sentence: why" },
  };
  // Allowed in every answer, asked for (required) in a cascade's.
  properties.confidence = { type: "number", minimum: 0, maximum: 1, description: "How sure the answer is, from 0 to 1" };
  return { type: "object", properties, required: withConfidence ? [field, "confidence"] : [field], additionalProperties: false };
}

/** Said to the model before the job's own system prompt, if any. */
export function filterInstruction(withConfidence: boolean): string {
  return (
    "You decide whether an item meets a condition. The user's message states the condition and gives the item. " +
    'Answer with a JSON object: "keep" is true when the item meets the condition and false when it does not; "reason" is one short sentence saying why' +
    (withConfidence ? '; "confidence" is how sure you are of "keep", from 0 to 1.' : ".")
  );
}
