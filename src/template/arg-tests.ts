/**
 * Jinja2's tests that take an argument (`x is divisibleby 3`, `x is in list`, `x is gt(2)`, …).
 * @huggingface/jinja's parser reads only `is [not] name`, so before parsing, each such test is
 * rewritten in the token stream into a filter call, `| __test_[not_]name(arg)`: a test binds to
 * its operand exactly as a filter does (both apply to the unary expression before them), and the
 * argument is what Jinja2 reads, a parenthesised list or one primary with its postfixes
 * (`item.tags`, `x[0]`, `f(y)`). The interpreter evaluates the call here with Python's semantics.
 */
import { pyCompare, pyEquals, type Value } from "./py-compare";

/** The tests with an argument, and Python Jinja2's aliases. */
export const ARG_TESTS: ReadonlyMap<string, (operand: Value, arg: Value) => boolean> = new Map([
  ["divisibleby", divisibleBy],
  ["in", contains],
  ["sameas", sameAs],
  ["eq", pyEquals],
  ["equalto", pyEquals],
  ["==", pyEquals],
  ["ne", (a: Value, b: Value) => !pyEquals(a, b)],
  ["!=", (a: Value, b: Value) => !pyEquals(a, b)],
  ["gt", (a: Value, b: Value) => pyCompare(a, b, ">") > 0],
  ["greaterthan", (a: Value, b: Value) => pyCompare(a, b, ">") > 0],
  [">", (a: Value, b: Value) => pyCompare(a, b, ">") > 0],
  ["ge", (a: Value, b: Value) => pyCompare(a, b, ">=") >= 0],
  [">=", (a: Value, b: Value) => pyCompare(a, b, ">=") >= 0],
  ["lt", (a: Value, b: Value) => pyCompare(a, b, "<") < 0],
  ["lessthan", (a: Value, b: Value) => pyCompare(a, b, "<") < 0],
  ["<", (a: Value, b: Value) => pyCompare(a, b, "<") < 0],
  ["le", (a: Value, b: Value) => pyCompare(a, b, "<=") <= 0],
  ["<=", (a: Value, b: Value) => pyCompare(a, b, "<=") <= 0],
]);

export const TEST_FILTER_PREFIX = "__test_";

function divisibleBy(operand: Value, arg: Value): boolean {
  const [n, d] = [operand.value, arg.value];
  if (typeof n !== "number" || typeof d !== "number") throw new Error("divisibleby: numbers are required");
  if (d === 0) throw new Error("divisibleby: integer division or modulo by zero");
  return n % d === 0;
}

/** Python's `operand in container`. */
export function contains(operand: Value, container: Value): boolean {
  switch (container.type) {
    case "StringValue":
      if (operand.type !== "StringValue") throw new Error("'in <string>' requires string as left operand");
      return (container.value as string).includes(operand.value as string);
    case "ArrayValue":
    case "TupleValue":
      return (container.value as Value[]).some((v) => pyEquals(v, operand));
    case "ObjectValue":
      return operand.type === "StringValue" && (container.value as Map<string, Value>).has(operand.value as string);
    default:
      throw new Error(`argument of type '${container.type}' is not iterable`);
  }
}

/** Python's `is`: None, True and False are singletons; anything else is the same object or not. */
function sameAs(a: Value, b: Value): boolean {
  if (a.type === "NullValue" || a.type === "BooleanValue") return a.type === b.type && a.value === b.value;
  if (a.type === "ArrayValue" || a.type === "TupleValue" || a.type === "ObjectValue") return a.value === b.value;
  return a === b;
}

/** `__test_[not_]name` → the test and whether it is negated; null for any other name. */
export function testOfFilter(name: string): { test: string; negate: boolean } | null {
  if (!name.startsWith(TEST_FILTER_PREFIX)) return null;
  const rest = name.slice(TEST_FILTER_PREFIX.length);
  const negate = rest.startsWith("not_");
  const test = negate ? rest.slice(4) : rest;
  return ARG_TESTS.has(test) ? { test, negate } : null;
}

interface Token {
  value: string;
  type: string;
}

const OPEN: Record<string, string> = { OpenParen: "CloseParen", OpenSquareBracket: "CloseSquareBracket", OpenCurlyBracket: "CloseCurlyBracket" };
const NOT_AN_ARGUMENT = new Set(["else", "or", "and", "if", "is"]);

/** The index after the bracket group opening at `at` (or the end, for a parse error to report). */
function afterGroup(tokens: Token[], at: number): number {
  let depth = 0;
  for (let i = at; i < tokens.length; i++) {
    const type = (tokens[i] as Token).type;
    if (type in OPEN) depth++;
    else if (Object.values(OPEN).includes(type) && --depth === 0) return i + 1;
  }
  return tokens.length;
}

/** Where a primary with its postfixes (`.name`, `[…]`, `(…)`) starting at `at` ends; `at` when there is none. */
function afterPrimary(tokens: Token[], at: number): number {
  const first = tokens[at];
  if (!first) return at;
  let end: number;
  if (first.type in OPEN) end = afterGroup(tokens, at);
  else if (first.type === "StringLiteral" || first.type === "NumericLiteral") end = at + 1;
  else if (first.type === "Identifier" && !NOT_AN_ARGUMENT.has(first.value)) end = at + 1;
  else return at;
  for (;;) {
    const next = tokens[end];
    if (next?.type === "Dot" && tokens[end + 1]?.type === "Identifier") end += 2;
    else if (next?.type === "OpenSquareBracket" || next?.type === "OpenParen") end = afterGroup(tokens, end);
    else return end;
  }
}

/** Rewrites `is [not] name ARG` for the tests of ARG_TESTS into `| __test_[not_]name(ARG)`; other tokens stay. */
export function rewriteArgTests<T extends Token>(tokens: T[], make: (value: string, type: string) => T): T[] {
  const out: T[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as T;
    const negate = tokens[i + 1]?.type === "Identifier" && tokens[i + 1]?.value === "not";
    const nameAt = negate ? i + 2 : i + 1;
    const name = tokens[nameAt];
    const isTest = token.type === "Identifier" && token.value === "is" && name?.type === "Identifier" && ARG_TESTS.has(name.value);
    if (!isTest) {
      out.push(token);
      continue;
    }
    const argAt = nameAt + 1;
    const parenthesised = tokens[argAt]?.type === "OpenParen";
    const end = parenthesised ? afterGroup(tokens, argAt) : afterPrimary(tokens, argAt);
    const args = parenthesised ? tokens.slice(argAt + 1, end - 1) : tokens.slice(argAt, end);
    out.push(make("|", "Pipe"), make(`${TEST_FILTER_PREFIX}${negate ? "not_" : ""}${name.value}`, "Identifier"));
    out.push(make("(", "OpenParen"), ...args, make(")", "CloseParen"));
    i = end - 1;
  }
  return out;
}
