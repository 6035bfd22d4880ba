/**
 * Upper bounds on the size of what the renderer may print from a value, found by one walk that
 * stops as soon as the bound passes `cap` (so sizing a value that shares one large list a
 * thousand times costs no more than the cap, never the thousandfold). The cost model
 * (./costs) sizes a filter's result with them before the filter runs.
 */
import type { Value } from "./runtime-value";

/** How a printer lays a value out: what a string becomes, and where a nested value starts. */
export interface Printing {
  /** Characters a top-level string prints as (str() prints it as it is). */
  top(s: string): number;
  /** Characters a nested string prints as, starting at `column` (quotes, escapes, line breaks). */
  nested(s: string, column: number): number;
  /** Characters a dict's key prints as. */
  key(s: string): number;
  /** The column a nested value starts at, inside a container at `column`, after a key of `keyChars`. */
  child(column: number, keyChars: number): number;
}

/** The length of Python's repr of `s` (./python-str: quotes; `\\`, `\n`, `\r`, `\t`, a quote 2; other controls `\x00` 4). */
function reprLength(s: string): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    n += c === 92 || c === 10 || c === 13 || c === 9 || c === 39 || c === 34 ? 2 : c < 0x20 || c === 0x7f ? 4 : 1;
  }
  return n;
}

/** The length of `s` as tojson writes it: ASCII only, HTML-safe (`<>&'` and every non-ASCII unit as `\u0000`). */
function jsonLength(s: string): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    n += c === 92 || c === 34 ? 2 : c < 0x20 || c >= 0x7f || c === 60 || c === 62 || c === 38 || c === 39 ? 6 : 1;
  }
  return n;
}

/** The length of `s` percent-encoded as UTF-8 (at most `%XX` per byte). */
function urlLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    n += c < 0x80 ? 3 : c < 0x800 ? 6 : 9; // a surrogate pair is 4 bytes: 2 × 6 ≥ 12
  }
  return n;
}

const ONE_LINE = (_column: number) => 0;

/** Python's str(): a string as it is, containers as their repr on one line. */
export const STR: Printing = { top: (s) => s.length, nested: reprLength, key: reprLength, child: ONE_LINE };
/** JSON on one line (tojson). */
export const JSON_ONE_LINE: Printing = { top: jsonLength, nested: jsonLength, key: jsonLength, child: ONE_LINE };
/** Percent-encoding (urlencode). */
export const URL: Printing = { top: urlLength, nested: urlLength, key: urlLength, child: ONE_LINE };

/** JSON with `indent` spaces a level (tojson(indent)): each nested value on a line of its own. */
export function jsonIndented(indent: number): Printing {
  return { ...JSON_ONE_LINE, child: (column) => column + indent };
}

const PPRINT_WIDTH = 80;
/** pprint.pformat: nested values one a line under their opening bracket; a long string cut into one literal a line. */
export const PPRINT: Printing = {
  top: (s) => PPRINT.nested(s, 0),
  nested: (s, column) => {
    const repr = reprLength(s);
    const room = PPRINT_WIDTH - column - 8;
    if (repr <= room) return repr;
    // Each literal but the last is longer than half the room left, else it would have taken the next piece.
    const pieces = room > 0 ? Math.ceil((2 * repr) / room) + 2 : s.length + 1;
    return repr + pieces * (column + 4);
  },
  key: reprLength,
  child: (column, keyChars) => column + 1 + (keyChars > 0 ? keyChars + 2 : 0),
};

/** Characters a number, bool, None or function prints as. */
function scalarLength(v: Value): number {
  switch (v.type) {
    case "IntegerValue":
      return String(v.value).length;
    case "FloatValue":
      return String(v.value).length + 4; // Python's repr may add ".0" or an exponent's sign and zero
    case "BooleanValue":
      return 5;
    case "NullValue":
      return 4;
    default:
      return 32; // "<function>", an undefined value's "", …
  }
}

/** Elements of a list, tuple or dict; characters of a string; 1 for anything else. */
export function lengthOf(v: Value | undefined): number {
  if (!v) return 0;
  if (v.type === "ArrayValue" || v.type === "TupleValue") return (v.value as unknown[]).length;
  if (v.type === "ObjectValue" || v.type === "KeywordArgumentsValue") return (v.value as Map<string, unknown>).size;
  if (v.type === "StringValue") return (v.value as string).length;
  return 1;
}

/**
 * At most how many characters `v` prints as (`printing`), or a number over `cap` once that is
 * certain. Each nested value may add a separator, a line break and its indentation.
 */
export function printedBound(v: Value | undefined, printing: Printing, cap: number): number {
  if (!v) return 0;
  if (v.type === "StringValue") return printing.top(v.value as string);
  let total = 0;
  const stack: [Value, number][] = [[v, 0]];
  while (stack.length > 0 && total <= cap) {
    const [value, column] = stack.pop() as [Value, number];
    const layout = 2 + column; // ", " or ",\n" and the line's indentation
    switch (value.type) {
      case "StringValue":
        total += printing.nested(value.value as string, column) + layout;
        break;
      case "ArrayValue":
      case "TupleValue":
        total += layout + 3; // brackets, and a one-tuple's comma
        for (const child of value.value as Value[]) stack.push([child, printing.child(column, 0)]);
        break;
      case "ObjectValue":
      case "KeywordArgumentsValue":
        total += layout + 2;
        for (const [key, child] of value.value as Map<string, Value>) {
          const keyChars = printing.key(key); // a key is one repr or JSON string, never cut
          total += keyChars + 2;
          stack.push([child, printing.child(column, keyChars)]);
        }
        break;
      default:
        total += scalarLength(value) + layout;
    }
  }
  return total;
}

/** Values reachable from `v` (itself included), counted up to a little past `cap`: what a deep comparison may touch. */
export function nodesBound(v: Value | undefined, cap: number): number {
  if (!v) return 0;
  let count = 0;
  const stack: Value[] = [v];
  while (stack.length > 0 && count <= cap) {
    const value = stack.pop() as Value;
    count++;
    if (value.type === "ArrayValue" || value.type === "TupleValue") for (const child of value.value as Value[]) stack.push(child);
    else if (value.type === "ObjectValue") for (const child of (value.value as Map<string, Value>).values()) stack.push(child);
  }
  return count;
}
