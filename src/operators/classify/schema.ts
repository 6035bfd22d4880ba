/** The request of POST /v1/classify, and the schema each item's answer is held to. */
import { z } from "@hono/zod-openapi";
import { baseJobFields, callConcurrencyField } from "../base-fields";
import { CascadeSchema } from "../cascade-field";
import { executionField } from "../execution-field";
import { PROTOTYPE_NAMES } from "../../lib/records";

export const MAX_CATEGORIES = 200;
export const DEFAULT_CLASSIFY_TEMPLATE = "Classify this item:\n{{ item }}";

const CategorySchema = z.strictObject({
  name: z.string().min(1).max(200).openapi({ description: "The label as answered and counted" }),
  description: z.string().max(2_000).optional().openapi({ description: "What belongs in it, said to the model" }),
});

export const ClassifyRequestSchema = z
  .strictObject({
    inputs: z
      .array(z.unknown())
      .min(1, "inputs must hold at least one item")
      .openapi({
        description: "The items; each is rendered into the template as `item`.",
        example: [{ text: "The battery died after two days." }],
      }),
    categories: z
      .array(CategorySchema)
      .min(2, "categories must hold at least 2")
      .max(MAX_CATEGORIES, `categories may hold at most ${MAX_CATEGORIES}`)
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((c, i) => {
          if (seen.has(c.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `the name "${c.name}" is used twice` });
          // A label is a key of the job's counts: never one of an object's own names.
          if (PROTOTYPE_NAMES.has(c.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `"${c.name}" cannot be a category name` });
          seen.add(c.name);
        });
      })
      .openapi({
        description: `The labels (2–${MAX_CATEGORIES}, unique names); the model's answer is constrained to their names`,
        example: [{ name: "complaint" }, { name: "praise" }, { name: "question" }],
      }),
    multi_label: z
      .boolean()
      .default(false)
      .openapi({ description: "Each item gets every label that applies (`labels`), not the one that fits best (`label`)" }),
    prompt_template: z
      .string()
      .min(1)
      .optional()
      .openapi({ description: `A Jinja2 template that must read \`item\` (default \`${DEFAULT_CLASSIFY_TEMPLATE.replace("\n", "\\n")}\`)` }),
    cascade: CascadeSchema.nullish().openapi({
      description:
        "A cheaper model labels every item first; its label is the item's when its confidence is at least `accept_above`, else the job's model labels it (`reject_below` is the filter's: nothing is rejected here)",
    }),
    ...baseJobFields,
    ...executionField,
    ...callConcurrencyField,
  })
  .openapi("ClassifyRequest");

export type ClassifyRequest = z.infer<typeof ClassifyRequestSchema>;

const CONFIDENCE = { type: "number", minimum: 0, maximum: 1, description: "How sure the answer is, from 0 to 1" };

/** What the model is asked for, and what each result's `output` is: `{label, confidence}` or `{labels, confidence}`. */
export function labelSchema(names: string[], multiLabel: boolean): Record<string, unknown> {
  const label = { type: "string", enum: names };
  return multiLabel
    ? {
        type: "object",
        properties: { labels: { type: "array", items: label, uniqueItems: true, description: "Every label that applies" }, confidence: CONFIDENCE },
        required: ["labels", "confidence"],
        additionalProperties: false,
      }
    : {
        type: "object",
        properties: { label: { ...label, description: "The label that fits best" }, confidence: CONFIDENCE },
        required: ["label", "confidence"],
        additionalProperties: false,
      };
}

/** Said to the model before the job's own system prompt, if any: the categories and the answer's form. */
export function classifyInstruction(categories: ClassifyRequest["categories"], multiLabel: boolean): string {
  const list = categories.map((c) => (c.description ? `- ${c.name}: ${c.description}` : `- ${c.name}`)).join("\n");
  const answer = multiLabel ? '"labels": every category name that applies (an empty list when none does)' : '"label": the one category name that fits best';
  return `You classify items into these categories:\n${list}\n\nAnswer with a JSON object: ${answer}; "confidence": how sure you are, from 0 to 1.`;
}
