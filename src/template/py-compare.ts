/**
 * Python's `==` and ordering on Jinja runtime values, for the tests (`eq`, `gt`, `in`, …) and the
 * filters that sort or compare (`groupby`, `unique`, `select('gt', 2)`): ints and floats compare
 * by value (True is 1), strings by code point, lists and tuples element-wise (a list never equals
 * a tuple), dicts by their pairs; ordering values of unrelated types is Python's TypeError.
 */
import type { Value } from "./runtime-value";

export type { Value };

const NUMERIC = new Set(["IntegerValue", "FloatValue", "BooleanValue"]);

function numberOf(v: Value): number {
  return v.type === "BooleanValue" ? (v.value ? 1 : 0) : (v.value as number);
}

function pyTypeName(v: Value): string {
  const names: Record<string, string> = {
    IntegerValue: "int",
    FloatValue: "float",
    BooleanValue: "bool",
    StringValue: "str",
    NullValue: "NoneType",
    UndefinedValue: "Undefined",
    ArrayValue: "list",
    TupleValue: "tuple",
    ObjectValue: "dict",
  };
  return names[v.type] ?? v.type;
}

/** Python's `a == b`. */
export function pyEquals(a: Value, b: Value): boolean {
  if (NUMERIC.has(a.type) && NUMERIC.has(b.type)) return numberOf(a) === numberOf(b);
  if (a.type !== b.type) return false;
  switch (a.type) {
    case "StringValue":
      return a.value === b.value;
    case "NullValue":
    case "UndefinedValue":
      return true;
    case "ArrayValue":
    case "TupleValue": {
      const [x, y] = [a.value as Value[], b.value as Value[]];
      return x.length === y.length && x.every((v, i) => pyEquals(v, y[i] as Value));
    }
    case "ObjectValue": {
      const [x, y] = [a.value as Map<string, Value>, b.value as Map<string, Value>];
      if (x.size !== y.size) return false;
      for (const [k, v] of x) {
        const other = y.get(k);
        if (!other || !pyEquals(v, other)) return false;
      }
      return true;
    }
    default:
      return a === b;
  }
}

/** Python's ordering of `a` and `b` (negative, 0, positive); a TypeError where Python has one. */
export function pyCompare(a: Value, b: Value, op = "<"): number {
  if (NUMERIC.has(a.type) && NUMERIC.has(b.type)) return numberOf(a) - numberOf(b);
  if (a.type === "StringValue" && b.type === "StringValue") {
    const [x, y] = [a.value as string, b.value as string];
    return x < y ? -1 : x > y ? 1 : 0; // UTF-16 order matches code points outside surrogates
  }
  const sequences = (a.type === "ArrayValue" || a.type === "TupleValue") && a.type === b.type;
  if (sequences) {
    const [x, y] = [a.value as Value[], b.value as Value[]];
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (!pyEquals(x[i] as Value, y[i] as Value)) return pyCompare(x[i] as Value, y[i] as Value, op);
    }
    return x.length - y.length;
  }
  throw new Error(`'${op}' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
}
