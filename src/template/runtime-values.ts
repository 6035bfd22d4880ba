/**
 * Values and filter nodes of @huggingface/jinja's interpreter as the Python-compatible one
 * (./jinja.ts) handles them: plain values to runtime values and back, arrays and tuples that keep
 * their members' types, a filter node's name, the same node under another name.
 */
import { Environment } from "@huggingface/jinja";
import { PyFloat } from "./filters";
import { pyStr } from "./python-str";
import type * as more from "./more-filters";

export type RuntimeValue = ReturnType<Environment["lookupVariable"]>;
export interface FilterNode {
  type: string;
  value?: string;
  callee?: { type: string; value?: string };
  args?: unknown[];
}

export function toRuntime(value: unknown): RuntimeValue {
  const scratch = new Environment();
  if (value instanceof PyFloat) {
    scratch.set("v", 0.5); // a FloatValue; keep its class, set the real number below
    const float = scratch.lookupVariable("v");
    (float as { value: unknown }).value = value.value;
    return float;
  }
  return scratch.set("v", value);
}

/** An ArrayValue holding runtime values as they are (their types kept). */
export function arrayOf(values: more.Value[]): more.Value {
  const array = toRuntime([]);
  (array as { value: unknown }).value = values;
  return array as more.Value;
}

/** An ArrayValue that prints and compares as a Python tuple; `members` adds named fields (`.grouper`). */
export function tupleOf(values: more.Value[], members: Record<string, more.Value> = {}): more.Value {
  const tuple = arrayOf(values) as more.Value & { _builtins?: Map<string, unknown> };
  (tuple as { type: string }).type = "TupleValue";
  tuple._builtins = new Map<string, unknown>([["length", toRuntime(values.length)], ...Object.entries(members)]);
  return tuple;
}

/** The same filter node under another name (`count` is `length`, `d` is `default`). */
export function renamed(filter: FilterNode, name: string): FilterNode {
  if (filter.type === "Identifier") return { ...filter, value: name } as FilterNode;
  return { ...filter, callee: { ...(filter as { callee: object }).callee, value: name } } as FilterNode;
}

export function toPlain(value: RuntimeValue): unknown {
  switch (value.type) {
    case "StringValue":
    case "IntegerValue":
    case "FloatValue":
    case "BooleanValue":
      return value.value;
    case "NullValue":
    case "UndefinedValue":
      return null;
    default:
      return pyStr(value);
  }
}

export function filterName(filter: FilterNode): string | undefined {
  if (filter.type === "Identifier") return filter.value;
  if (filter.type === "CallExpression" && filter.callee?.type === "Identifier") return filter.callee.value;
  return undefined;
}
