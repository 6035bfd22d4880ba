/**
 * More of Jinja2's builtin filters, on runtime values where Python's types matter: `batch`,
 * `slice` (list shapes; the elements keep their types), `urlencode` (Python's `str()` of each
 * value, UTF-8 percent-encoding), `filesizeformat`, and the aliases `count` (length) and `d`
 * (default). Each follows jinja2/filters.py 3.1.
 */
import { roundHalfEven } from "./filters";
import { pyStr } from "./python-str";

import type { Value } from "./runtime-value";

export type { Value };

export type ArrayOf = (values: Value[]) => Value;

function sequence(operand: Value, filter: string): Value[] {
  if (operand.type === "ArrayValue" || operand.type === "TupleValue") return operand.value as Value[];
  if (operand.type === "StringValue") return [...(operand.value as string)].map((c) => ({ type: "StringValue", value: c, toString: () => c }));
  throw new Error(`${filter}: ${operand.type} is not a sequence`);
}

const intArg = (v: Value | undefined, filter: string): number => {
  const n = v?.value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1) throw new Error(`${filter}: a positive integer is required`);
  return n;
};

/** batch(linecount, fill_with=None): rows of `linecount` items; the last row padded with `fill_with` if given. */
export function batch(operand: Value, args: Value[], kwargs: Map<string, Value>, arrayOf: ArrayOf): Value {
  const size = intArg(args[0] ?? kwargs.get("linecount"), "batch");
  const fill = args[1] ?? kwargs.get("fill_with");
  const items = sequence(operand, "batch");
  const rows: Value[] = [];
  for (let i = 0; i < items.length; i += size) {
    const row = items.slice(i, i + size);
    if (fill && fill.type !== "NullValue") while (row.length < size) row.push(fill);
    rows.push(arrayOf(row));
  }
  return arrayOf(rows);
}

/** slice(slices, fill_with=None): `slices` columns, the first ones one longer, as Python's algorithm cuts them. */
export function slice(operand: Value, args: Value[], kwargs: Map<string, Value>, arrayOf: ArrayOf): Value {
  const slices = intArg(args[0] ?? kwargs.get("slices"), "slice");
  const fill = args[1] ?? kwargs.get("fill_with");
  const seq = sequence(operand, "slice");
  const perSlice = Math.floor(seq.length / slices);
  const withExtra = seq.length % slices;
  let offset = 0;
  const out: Value[] = [];
  for (let n = 0; n < slices; n++) {
    const start = offset + n * perSlice;
    if (n < withExtra) offset += 1;
    const end = offset + (n + 1) * perSlice;
    const part = seq.slice(start, end);
    if (fill && fill.type !== "NullValue" && n >= withExtra) part.push(fill);
    out.push(arrayOf(part));
  }
  return arrayOf(out);
}

const UNRESERVED = /[A-Za-z0-9_.\-~]/;

/** Python's urllib.parse.quote of UTF-8 bytes: `safe` characters stay, the rest is %XX. */
function quote(text: string, safe: string): string {
  let out = "";
  for (const ch of text) {
    if (UNRESERVED.test(ch) || safe.includes(ch)) {
      out += ch;
      continue;
    }
    for (const byte of new TextEncoder().encode(ch)) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** urlencode: a string (or a scalar) quoted with `/` kept; a dict or a list of pairs as a query string. */
export function urlencode(operand: Value): string {
  const forQs = (v: Value) => quote(pyStr(v), "").replaceAll("%20", "+");
  if (operand.type === "ObjectValue") {
    return [...(operand.value as Map<string, Value>).entries()].map(([k, v]) => `${quote(k, "").replaceAll("%20", "+")}=${forQs(v)}`).join("&");
  }
  if (operand.type === "ArrayValue" || operand.type === "TupleValue") {
    return (operand.value as Value[])
      .map((pair) => {
        const [k, v] = sequence(pair, "urlencode");
        if (!k || !v) throw new Error("urlencode: a list must hold (key, value) pairs");
        return `${forQs(k)}=${forQs(v)}`;
      })
      .join("&");
  }
  return quote(pyStr(operand), "/");
}

const DECIMAL = ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"];
const BINARY = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"];

/** filesizeformat(binary=False): "1 Byte", "12 Bytes", "1.2 kB" (or KiB), as Jinja2 words it. */
export function filesizeformat(operand: Value, args: Value[], kwargs: Map<string, Value>): string {
  const bytes = Number(operand.value);
  if (!Number.isFinite(bytes)) throw new Error("filesizeformat: a number is required");
  const binary = Boolean((args[0] ?? kwargs.get("binary"))?.value);
  const base = binary ? 1024 : 1000;
  const prefixes = binary ? BINARY : DECIMAL;
  if (bytes === 1) return "1 Byte";
  if (bytes < base) return `${Math.trunc(bytes)} Bytes`;
  for (let i = 0; i < prefixes.length; i++) {
    const unit = base ** (i + 2);
    if (bytes < unit || i === prefixes.length - 1) return `${roundHalfEven((base * bytes) / unit, 1).toFixed(1)} ${prefixes[i]}`;
  }
  return `${bytes} Bytes`;
}
