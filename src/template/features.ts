/**
 * Which filters and tests a template may use: those the renderer has (@huggingface/jinja's own,
 * with Python's semantics where they differ, and Fanout's in ./filters). A template naming any
 * other is refused at submission — 400 `unsupported_template_feature` naming it — by walking
 * the parsed template, never discovered item by item at run time.
 */
import { EXTRA_FILTERS } from "./filters";
import { ARG_TESTS, testOfFilter } from "./arg-tests";

/** The renderer's own filters (checked against its source: an unknown one fails every render). */
const RUNTIME_FILTERS = [
  "abs", "bool", "capitalize", "default", "first", "float", "indent", "int", "items", "join", "last", "length", "list",
  "lower", "map", "rejectattr", "replace", "reverse", "safe", "selectattr", "sort", "string", "title", "tojson", "trim",
  "unique", "upper", "dictsort",
];

/** Filters Fanout renders on runtime values (Python's semantics): ./percent-format, ./aggregates, ./more-filters. */
const RUNTIME_VALUE_FILTERS = [
  "format", "sum", "min", "max", "batch", "slice", "urlencode", "filesizeformat", "count", "d",
  "select", "reject", "groupby", "wordwrap", "striptags", "xmlattr", "pprint",
];

export const SUPPORTED_FILTERS: ReadonlySet<string> = new Set([...RUNTIME_FILTERS, ...RUNTIME_VALUE_FILTERS, ...EXTRA_FILTERS.keys()]);

/** Tests (`x is odd`, and those with an argument, `x is divisibleby 3`, rewritten into calls by ./arg-tests). */
export const SUPPORTED_TESTS: ReadonlySet<string> = new Set([
  "boolean", "callable", "odd", "even", "false", "true", "none", "string", "number", "integer", "float", "iterable", "mapping",
  "sequence", "lower", "upper", "defined", "undefined", ...ARG_TESTS.keys(),
]);

interface Node {
  type: string;
  [key: string]: unknown;
}

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";

function filterNameOf(filter: unknown): string | null {
  if (!isNode(filter)) return null;
  if (filter.type === "Identifier") return String(filter.value);
  if (filter.type === "CallExpression" && isNode(filter.callee) && filter.callee.type === "Identifier") return String(filter.callee.value);
  return null;
}

/** Every filter and test the template names that the renderer does not have, as `filter x` / `test y`, in order. */
export function unsupportedFeatures(program: { body: unknown[] }): string[] {
  const found = new Set<string>();
  const stack: unknown[] = [program.body];
  let seen = 0;
  while (stack.length > 0 && seen++ < 1_000_000) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
      continue;
    }
    if (value instanceof Map) {
      for (const [k, v] of value) stack.push(k, v);
      continue;
    }
    if (!isNode(value)) continue;
    if (value.type === "FilterExpression" || value.type === "FilterStatement") {
      const name = filterNameOf(value.filter);
      if (name && !SUPPORTED_FILTERS.has(name) && !testOfFilter(name)) found.add(`filter \`${name}\``);
    }
    if (value.type === "TestExpression" && isNode(value.test)) {
      const name = String(value.test.value);
      if (!SUPPORTED_TESTS.has(name)) found.add(`test \`${name}\``);
    }
    for (const [key, child] of Object.entries(value)) if (key !== "type") stack.push(child);
  }
  return [...found];
}
