/** The request of POST /v1/join (contract v4, "Embeddings, joins, embedding blocking"), and what its calls answer. */
import { z } from "@hono/zod-openapi";
import { baseJobFields, callConcurrencyField } from "../base-fields";
import { CascadeSchema } from "../cascade-field";
import { executionField } from "../execution-field";
import { BlockingSchema, MAX_COMPARISONS_CAP, maxComparisonsField } from "../resolve/schema";

/** The most right items one classify call chooses among (the semantic-join rewrite's list). */
export const MAX_CLASSIFY_CANDIDATES = 200;

export const JoinRequestSchema = z
  .strictObject({
    left: z
      .array(z.unknown())
      .min(1, "left must hold at least one item")
      .openapi({ description: "The left list", example: [{ name: "IBM" }] }),
    right: z
      .array(z.unknown())
      .min(1, "right must hold at least one item")
      .openapi({ description: "The right list", example: [{ name: "International Business Machines" }, { name: "Globex" }] }),
    predicate_template: z.string().min(1).openapi({
      description: "A Jinja2 template that must read `left` and `right`: the condition a (left, right) pair must meet to be joined",
      example: "Do these name the same company? {{ left.name }} / {{ right.name }}",
    }),
    blocking: BlockingSchema.nullish().openapi({
      description: "Which pairs are judged: those whose keys agree (as resolve's blocking, across the two lists); absent: every pair, within max_comparisons",
    }),
    strategy: z
      .enum(["pairs", "classify", "auto"])
      .default("pairs")
      .openapi({
        description: `pairs: one call per pair; classify: one call per left item choosing its matches among its candidates (at most ${MAX_CLASSIFY_CANDIDATES}: the semantic-join rewrite); auto: the cheaper of the two by the estimate`,
      }),
    max_comparisons: maxComparisonsField(
      `Pairs judged at most: more is refused (422 \`too_many_comparisons\`) before anything runs (1–${MAX_COMPARISONS_CAP})`,
    ),
    cascade: CascadeSchema.nullish().openapi({ description: "A cheaper model first, on pairs (fixed thresholds or a target), as the filter's" }),
    ...baseJobFields,
    ...executionField,
    ...callConcurrencyField,
  })
  .openapi("JoinRequest");

export type JoinRequest = z.infer<typeof JoinRequestSchema>;

export const MATCH_DESCRIBED = "true when the left and right records meet the condition together, false when they do not";

export function pairInstruction(withConfidence: boolean): string {
  return (
    "You decide whether a pair of records — one from a left list, one from a right list — meets a condition. The user's message states the condition with the two records. " +
    'Answer with a JSON object: "match" is true when the pair meets it and false when it does not; "reason" is one short sentence saying why' +
    (withConfidence ? '; "confidence" is how sure you are of "match", from 0 to 1.' : ".")
  );
}

export const CLASSIFY_INSTRUCTION =
  "You decide which candidates, each from a right list, meet a condition together with one left record. The user's message states the condition once for each numbered candidate. " +
  'Answer with a JSON object: "matches" lists the numbers of the candidates that meet it (an empty list when none does).';

/** A classify call's answer: the candidates' numbers. */
export const MATCHES_SCHEMA: Record<string, unknown> = {
  type: "object",
  properties: { matches: { type: "array", items: { type: "integer", minimum: 0, maximum: MAX_CLASSIFY_CANDIDATES - 1 }, maxItems: MAX_CLASSIFY_CANDIDATES } },
  required: ["matches"],
  additionalProperties: false,
};

/** The classify call's template: the predicate once per candidate, numbered, `right` each candidate in turn. */
export const classifyTemplate = (predicate: string): string => `{% for right in candidates %}Candidate {{ loop.index0 }}:\n${predicate}\n\n{% endfor %}`;
