/**
 * The output tokens a call is expected to write, for estimates (contract v4, "Estimates and
 * names"): sized from the answer's JSON Schema — its keys and punctuation, a short string
 * (EXPECTED_STRING_TOKENS) or its longest enum value, a number's few digits, ARRAY_ELEMENTS
 * elements of a list (within minItems/maxItems) — never above the call's bound (`max_tokens`,
 * which budgets reserve). A call without a schema is expected to write FREE_TEXT_SHARE of its
 * bound. Bounded work: the walk stops at MAX_DEPTH and MAX_NODES.
 */
import { CHARS_PER_TOKEN, outputBound } from "./estimate";

const EXPECTED_STRING_TOKENS = 12;
const ARRAY_ELEMENTS = 3;
const FREE_TEXT_SHARE = 0.25;
const MAX_DEPTH = 16;
const MAX_NODES = 2_000;

type Schema = Record<string, unknown>;

const tokensOf = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN);

/** The expected output tokens of one call with this answer schema (null: free text) and bound. */
export function expectedOutputTokens(schema: Schema | null | undefined, maxTokens: number | null): number {
  const bound = outputBound(maxTokens);
  if (!schema) return Math.max(1, Math.round(bound * FREE_TEXT_SHARE));
  const budget = { nodes: 0 };
  return Math.max(1, Math.min(bound, Math.ceil(sized(schema, 0, budget))));
}

/** What the estimate's `method` says of it. */
export const OUTPUT_SIZE_NOTE = `expected outputs sized from each call's output schema (keys and punctuation, ${EXPECTED_STRING_TOKENS} tokens a string or its longest enum value, ${ARRAY_ELEMENTS} elements a list), a quarter of max_tokens without one; output_tokens_max and cost_usd_max count max_tokens (1,024 when unset), which budgets reserve and the 422 check uses`;

function sized(schema: unknown, depth: number, budget: { nodes: number }): number {
  if (!schema || typeof schema !== "object" || depth > MAX_DEPTH || ++budget.nodes > MAX_NODES) return 1;
  const s = schema as Schema;
  if (Array.isArray(s.enum) && s.enum.length > 0) return Math.max(...s.enum.slice(0, 100).map((v) => tokensOf(JSON.stringify(v) ?? "")));
  if ("const" in s) return tokensOf(JSON.stringify(s.const) ?? "");
  const options = [s.anyOf, s.oneOf].find(Array.isArray) as unknown[] | undefined;
  if (options && options.length > 0) return Math.max(...options.slice(0, 20).map((o) => sized(o, depth + 1, budget)));
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== "null") ?? s.type[0]) : s.type;
  switch (type) {
    case "object": {
      const properties = s.properties && typeof s.properties === "object" ? Object.entries(s.properties as Schema) : [];
      // Each property: its key in quotes, a colon and a comma (about two tokens), and its value.
      return 2 + properties.slice(0, 200).reduce((n, [key, value]) => n + tokensOf(key) + 2 + sized(value, depth + 1, budget), 0);
    }
    case "array": {
      const min = typeof s.minItems === "number" ? s.minItems : 0;
      const max = typeof s.maxItems === "number" ? s.maxItems : Infinity;
      const elements = Math.min(Math.max(ARRAY_ELEMENTS, min), max, 1_000);
      return 2 + elements * (1 + sized(s.items, depth + 1, budget));
    }
    case "string":
      return typeof s.maxLength === "number"
        ? Math.min(EXPECTED_STRING_TOKENS, 1 + tokensOf("x".repeat(Math.min(s.maxLength, 4_000))))
        : EXPECTED_STRING_TOKENS;
    case "number":
    case "integer":
      return 2;
    case "boolean":
    case "null":
      return 1;
    default:
      return EXPECTED_STRING_TOKENS; // any JSON value: a short one
  }
}
