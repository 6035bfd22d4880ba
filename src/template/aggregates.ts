/**
 * Jinja2's `sum(attribute=None, start=0)`, `min(case_sensitive=False, attribute=None)` and
 * `max(…)` on runtime values: integers stay integers, floats stay floats (Python's arithmetic),
 * strings compare case-insensitively by default, an empty list gives `start` (sum) or undefined.
 */
import type { Value } from "./runtime-value";

const number = (v: Value): number => {
  if (v.type === "IntegerValue" || v.type === "FloatValue") return v.value as number;
  if (v.type === "BooleanValue") return v.value ? 1 : 0;
  throw new Error(`sum: unsupported operand ${v.type}`);
};

function attributeOf(v: Value, path: string | null): Value {
  if (!path) return v;
  let current: Value = v;
  for (const part of path.split(".")) {
    if (current.type === "ObjectValue") current = (current.value as Map<string, Value>).get(part) ?? { type: "UndefinedValue", value: undefined };
    else if (current.type === "ArrayValue" && /^\d+$/.test(part))
      current = (current.value as Value[])[Number(part)] ?? { type: "UndefinedValue", value: undefined };
    else return { type: "UndefinedValue", value: undefined };
  }
  return current;
}

function items(operand: Value): Value[] {
  if (operand.type === "ArrayValue" || operand.type === "TupleValue") return operand.value as Value[];
  if (operand.type === "ObjectValue") return [...(operand.value as Map<string, Value>).keys()].map((k) => ({ type: "StringValue", value: k }));
  if (operand.type === "StringValue") return [...(operand.value as string)].map((c) => ({ type: "StringValue", value: c }));
  throw new Error(`${operand.type} is not iterable`);
}

type Make = (value: unknown, type: string) => Value;

export function aggregate(name: "sum" | "min" | "max", operand: Value, args: Value[], kwargs: Map<string, Value>, make?: Make): Value {
  const build: Make = make ?? ((value, type) => ({ type, value }));
  const attribute = (name === "sum" ? (args[0] ?? kwargs.get("attribute")) : (args[1] ?? kwargs.get("attribute")))?.value as string | undefined;
  const all = items(operand);
  const values = all.map((v) => attributeOf(v, attribute ?? null));
  if (name === "sum") {
    const start = args[1] ?? kwargs.get("start") ?? { type: "IntegerValue", value: 0 };
    let float = start.type === "FloatValue";
    let total = number(start);
    for (const v of values) {
      float ||= v.type === "FloatValue";
      total += number(v);
    }
    return build(total, float ? "FloatValue" : "IntegerValue");
  }
  if (values.length === 0) return build(undefined, "UndefinedValue");
  const caseSensitive = Boolean((args[0] ?? kwargs.get("case_sensitive"))?.value);
  const key = (v: Value) => (v.type === "StringValue" && !caseSensitive ? (v.value as string).toLowerCase() : (v.value as number | string));
  // Compared by the attribute, answered with the whole item (Python's key function).
  let best = 0;
  for (let i = 1; i < values.length; i++) {
    const better = name === "min" ? key(values[i] as Value) < key(values[best] as Value) : key(values[i] as Value) > key(values[best] as Value);
    if (better) best = i;
  }
  return all[best] as Value;
}
