/**
 * Which filters and tests a template may use: those the renderer has (@huggingface/jinja's own,
 * with Python's semantics where they differ, and Fanout's in ./filters). A template naming any
 * other is refused at submission — 400 `unsupported_template_feature` naming it — by walking
 * the parsed template, never discovered item by item at run time.
 */
import { FILTER_COSTS, TEST_COSTS } from "./costs";
import { testOfFilter } from "./arg-tests";

/**
 * The filters and tests a template may use: exactly those with a declared cost (./costs). A filter
 * the renderer has but the cost model does not know is refused like an unknown one.
 */
export const SUPPORTED_FILTERS: ReadonlySet<string> = new Set(Object.keys(FILTER_COSTS));

/** Tests (`x is odd`, and those with an argument, `x is divisibleby 3`, rewritten into calls by ./arg-tests). */
export const SUPPORTED_TESTS: ReadonlySet<string> = new Set(Object.keys(TEST_COSTS));

interface Node {
  type: string;
  [key: string]: unknown;
}

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";

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
