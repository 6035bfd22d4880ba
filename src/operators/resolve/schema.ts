/** The request of POST /v1/resolve (entity resolution), and the answer a comparison is held to. */
import { z } from "@hono/zod-openapi";
import { JsonSchemaField, baseJobFields, callConcurrencyField } from "../base-fields";
import { executionField } from "../execution-field";
import { dimensionsField } from "../embed/schema";

export const DEFAULT_MAX_COMPARISONS = 10_000;
export const MAX_COMPARISONS_CAP = 100_000;

/** The most pairs a job compares (resolve, join), its own description each. */
export const maxComparisonsField = (description: string) =>
  z.number().int().min(1).max(MAX_COMPARISONS_CAP).default(DEFAULT_MAX_COMPARISONS).openapi({ description });

/** The most neighbours an item of an embedding blocking is compared with. */
export const MAX_TOP_K = 50;

export const BlockingSchema = z
  .strictObject({
    keys: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(10)
      .optional()
      .openapi({
        description:
          "The fields (dotted paths) whose values make an item's blocking key (required but for `embedding`, where absent: the whole item is embedded)",
        example: ["name"],
      }),
    method: z.enum(["exact", "prefix", "trigram", "embedding"]).default("exact").openapi({
      description:
        "exact: the same key; prefix: the same first `threshold` characters (default 4); trigram: keys whose trigram sets overlap by at least `threshold` (Jaccard, default 0.5); embedding: each item's nearest neighbours by the cosine of `model`'s embeddings of its key (at least `threshold`, default 0.85; at most `top_k`, default 10)",
    }),
    threshold: z.number().min(0).max(1_000).optional().openapi({
      description: "prefix: how many characters (an integer ≥ 1); trigram: the least overlap, 0–1; embedding: the least cosine, 0–1; exact: not used",
    }),
    model: z.string().min(1).max(200).optional().openapi({
      description: "embedding (required): the embedding model, `openai/text-embedding-3-small` or as POST /v1/embed takes",
      example: "openai/text-embedding-3-small",
    }),
    top_k: z
      .number()
      .int()
      .min(1)
      .max(MAX_TOP_K)
      .optional()
      .openapi({ description: `embedding: the nearest neighbours an item (a join: a left item) is compared with at most (1–${MAX_TOP_K}, default 10)` }),
    dimensions: dimensionsField("embedding: the vectors' length, where the model lets it be chosen (as POST /v1/embed's)"),
  })
  .openapi("Blocking");

export const ResolveRequestSchema = z
  .strictObject({
    inputs: z
      .array(z.unknown())
      .min(1, "inputs must hold at least one item")
      .openapi({ description: "The records to resolve", example: [{ name: "Acme Inc." }, { name: "ACME, Inc" }, { name: "Globex" }] }),
    comparison_template: z.string().min(1).openapi({
      description: 'A Jinja2 template that must read `item_a` and `item_b`: the model answers `{"match": bool, "reason"}`',
      example: "Are these the same company? {{ item_a.name }} / {{ item_b.name }}",
    }),
    blocking: BlockingSchema,
    max_comparisons: maxComparisonsField(
      `A blocking that would compare more pairs than this is refused (422 \`too_many_comparisons\`) before anything runs (1–${MAX_COMPARISONS_CAP})`,
    ),
    resolution_template: z.string().min(1).optional().openapi({
      description: "One call per cluster of two or more records, reading `items` (the cluster's records): its output is the cluster's record in `resolved`",
    }),
    output_schema: JsonSchemaField.openapi({ description: "JSON Schema of a resolution's output (with `resolution_template`)" }),
    ...baseJobFields,
    ...executionField,
    ...callConcurrencyField,
  })
  .openapi("ResolveRequest");

export type ResolveRequest = z.infer<typeof ResolveRequestSchema>;

export const MATCH_SCHEMA: Record<string, unknown> = {
  type: "object",
  properties: {
    match: { type: "boolean", description: "true when both records describe the same entity" },
    reason: { type: "string", description: "One short sentence: why" },
  },
  required: ["match"],
  additionalProperties: false,
};

export const MATCH_INSTRUCTION =
  "You decide whether two records describe the same real-world entity. " +
  'Answer with a JSON object: "match" is true when they do and false when they do not; "reason" is one short sentence saying why.';
