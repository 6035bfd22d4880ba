/**
 * Jinja2's list and dict filters with Python's semantics (jinja2/filters.py 3.1), on runtime
 * values: `select`/`reject` and `selectattr`/`rejectattr` with any test and its argument,
 * `groupby` (sorted, case-insensitive by default, `(grouper, list)` tuples), `unique`, `map` (an
 * attribute, or a filter by name with its arguments), and `dictsort`/`items` as tuples. Their
 * costs are declared in ./costs and charged by the renderer before they run.
 */
import { ARG_TESTS } from "./arg-tests";
import { pyCompare, pyEquals } from "./py-compare";
import { arg, flag, truthy, type Kwargs, type Value } from "./runtime-value";

export interface Runtime {
  arrayOf(values: Value[]): Value;
  tupleOf(values: Value[], members?: Record<string, Value>): Value;
  plain(value: unknown): Value;
  undefinedValue(): Value;
  /** The renderer's own test of that name (odd, string, defined, …), if any. */
  builtinTest(name: string): ((operand: Value) => boolean) | undefined;
  /** Applies the filter of that name, as `value | name(args, kwargs)` would. */
  filter(value: Value, name: string, args: Value[], kwargs: Map<string, Value>): Value;
}

/** Python's list() of a value: a string's characters, a dict's keys, a sequence's elements. */
export function listOf(operand: Value): Value[] {
  return items(operand, "list");
}

function items(operand: Value, filter: string): Value[] {
  if (operand.type === "ArrayValue" || operand.type === "TupleValue") return operand.value as Value[];
  if (operand.type === "StringValue") return [...(operand.value as string)].map((c) => ({ type: "StringValue", value: c, toString: () => c }));
  if (operand.type === "ObjectValue")
    return [...(operand.value as Map<string, Value>).keys()].map((k) => ({ type: "StringValue", value: k, toString: () => k }));
  if (operand.type === "UndefinedValue") return [];
  throw new Error(`${filter}: a ${operand.type} is not iterable`);
}

/** Jinja2's attribute getter: dotted parts, digits index lists; a missing one is undefined (or `fallback`). */
function attribute(rt: Runtime, value: Value, path: Value | undefined, fallback?: Value): Value {
  if (path === undefined) return value;
  if (path.type !== "StringValue" && path.type !== "IntegerValue") throw new Error(`an attribute must be a string or an integer, not ${path.type}`);
  const parts = path.type === "IntegerValue" ? [String(path.value)] : String(path.value).split(".");
  let current: Value | undefined = value;
  for (const part of parts) {
    if (!current) break;
    if (current.type === "ObjectValue") current = (current.value as Map<string, Value>).get(part);
    else if ((current.type === "ArrayValue" || current.type === "TupleValue") && /^\d+$/.test(part)) current = (current.value as Value[])[Number(part)];
    else if (current.type === "StringValue" && /^\d+$/.test(part)) current = rt.plain([...(current.value as string)][Number(part)]);
    else if (current.type === "TupleValue" && part !== "length")
      current = (current as { builtins?: Map<string, Value> }).builtins?.get(part); // a groupby tuple's grouper and list
    else current = undefined;
  }
  return current ?? fallback ?? rt.undefinedValue();
}

/** Whether `value` passes the test `name` with `args` (no name: its truth). */
function passes(rt: Runtime, value: Value, name: Value | undefined, args: Value[]): boolean {
  if (name === undefined) return truthy(value);
  const test = String(name.value);
  const withArg = ARG_TESTS.get(test);
  if (withArg) {
    if (!args[0]) throw new Error(`the test '${test}' needs an argument`);
    return withArg(value, args[0]);
  }
  const builtin = rt.builtinTest(test);
  if (!builtin) throw new Error(`No test named '${test}'.`);
  return builtin(value);
}

/** select/reject(test?, *args). */
export function select(rt: Runtime, operand: Value, args: Value[], keep: boolean): Value {
  const [name, ...rest] = args;
  const values = items(operand, keep ? "select" : "reject");
  return rt.arrayOf(values.filter((v) => passes(rt, v, name, rest) === keep));
}

/** selectattr/rejectattr(attribute, test?, *args). */
export function selectAttr(rt: Runtime, operand: Value, args: Value[], keep: boolean): Value {
  const [path, name, ...rest] = args;
  if (!path) throw new Error(`${keep ? "selectattr" : "rejectattr"}: an attribute is required`);
  const values = items(operand, "selectattr");
  return rt.arrayOf(values.filter((v) => passes(rt, attribute(rt, v, path), name, rest) === keep));
}

const folded = (v: Value, caseSensitive: boolean): Value =>
  !caseSensitive && v.type === "StringValue" ? { ...v, value: (v.value as string).toLowerCase() } : v;

/** A stable sort by `key`, Python's ordering (a TypeError for values it cannot order). */
function sortedBy(rt: Runtime, values: Value[], key: (v: Value) => Value, reverse = false): Value[] {
  const keyed = values.map((v, i) => ({ v, k: key(v), i }));
  keyed.sort((a, b) => (reverse ? pyCompare(b.k, a.k) : pyCompare(a.k, b.k)) || a.i - b.i);
  return keyed.map((e) => e.v);
}

/** groupby(attribute, default=None, case_sensitive=False): `(grouper, list)` tuples in key order. */
export function groupby(rt: Runtime, operand: Value, args: Value[], kwargs: Kwargs): Value {
  const path = arg(args, kwargs, 0, "attribute");
  if (!path) throw new Error("groupby: an attribute is required");
  const fallback = arg(args, kwargs, 1, "default");
  const caseSensitive = flag(args, kwargs, 2, "case_sensitive", false);
  const key = (v: Value) => folded(attribute(rt, v, path, fallback), caseSensitive);
  const groups: Value[][] = [];
  for (const v of sortedBy(rt, items(operand, "groupby"), key)) {
    const last = groups.at(-1);
    if (last && pyEquals(key(last[0] as Value), key(v))) last.push(v);
    else groups.push([v]);
  }
  return rt.arrayOf(
    groups.map((members) => {
      const grouper = attribute(rt, members[0] as Value, path, fallback);
      const list = rt.arrayOf(members);
      return rt.tupleOf([grouper, list], { grouper, list });
    }),
  );
}

/** unique(case_sensitive=False, attribute=None): the first of each, in order. */
export function unique(rt: Runtime, operand: Value, args: Value[], kwargs: Kwargs): Value {
  const caseSensitive = flag(args, kwargs, 0, "case_sensitive", false);
  const path = arg(args, kwargs, 1, "attribute");
  const seen = new Set<string>();
  const out: Value[] = [];
  for (const v of items(operand, "unique")) {
    const k = hashKey(folded(attribute(rt, v, path), caseSensitive));
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(v);
  }
  return rt.arrayOf(out);
}

/** A string equal for values Python hashes and compares equal (1, 1.0 and True); lists and dicts are unhashable. */
function hashKey(v: Value): string {
  switch (v.type) {
    case "IntegerValue":
    case "FloatValue":
      return `n:${v.value as number}`;
    case "BooleanValue":
      return `n:${v.value ? 1 : 0}`;
    case "StringValue":
      return `s:${v.value as string}`;
    case "NullValue":
    case "UndefinedValue":
      return v.type;
    case "TupleValue":
      return `t:${JSON.stringify((v.value as Value[]).map(hashKey))}`;
    default:
      throw new Error(`unhashable type: '${v.type === "ObjectValue" ? "dict" : "list"}'`);
  }
}

/** map(attribute=…, default=…) or map('filter', *args, **kwargs). */
export function map(rt: Runtime, operand: Value, args: Value[], kwargs: Kwargs): Value {
  const values = items(operand, "map");
  const path = kwargs.get("attribute");
  if (path) return rt.arrayOf(values.map((v) => attribute(rt, v, path, kwargs.get("default"))));
  const [name, ...rest] = args;
  if (!name || name.type !== "StringValue") throw new Error("map: a filter name or attribute= is required");
  return rt.arrayOf(values.map((v) => rt.filter(v, name.value as string, rest, kwargs)));
}

function pairsOf(operand: Value, filter: string): [string, Value][] {
  if (operand.type === "UndefinedValue") return [];
  if (operand.type !== "ObjectValue") throw new Error(`${filter}: a mapping is required`);
  return [...(operand.value as Map<string, Value>).entries()];
}

/** dictsort(case_sensitive=False, by='key', reverse=False): `(key, value)` tuples. */
export function dictsort(rt: Runtime, operand: Value, args: Value[], kwargs: Kwargs): Value {
  const caseSensitive = flag(args, kwargs, 0, "case_sensitive", false);
  const by = String(arg(args, kwargs, 1, "by")?.value ?? "key");
  if (by !== "key" && by !== "value") throw new Error("dictsort: You can only sort by either 'key' or 'value'");
  const reverse = flag(args, kwargs, 2, "reverse", false);
  const tuples = pairsOf(operand, "dictsort").map(([k, v]) => rt.tupleOf([rt.plain(k), v]));
  const key = (t: Value) => folded((t.value as Value[])[by === "key" ? 0 : 1] as Value, caseSensitive);
  return rt.arrayOf(sortedBy(rt, tuples, key, reverse));
}

/** items(): `(key, value)` tuples in the mapping's order. */
export function itemsFilter(rt: Runtime, operand: Value): Value {
  return rt.arrayOf(pairsOf(operand, "items").map(([k, v]) => rt.tupleOf([rt.plain(k), v])));
}
