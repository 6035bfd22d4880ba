/**
 * Jinja2 filters that people use in prompts and that @huggingface/jinja lacks, with Jinja2's
 * semantics and defaults (jinja2/filters.py): truncate, wordcount, round, indent, center, escape/e,
 * and title/capitalize, whose @huggingface/jinja versions differ from Python's.
 * Each takes the operand and arguments as plain JS values and returns a plain JS value.
 */
export type FilterFn = (operand: unknown, args: unknown[], kwargs: Map<string, unknown>) => unknown;

/** Marks a number that must render as a Python float (`2.0`, not `2`). */
export class PyFloat {
  constructor(readonly value: number) {}
}

const arg = <T>(args: unknown[], kwargs: Map<string, unknown>, i: number, name: string, fallback: T): T =>
  (args.length > i ? args[i] : kwargs.has(name) ? kwargs.get(name) : fallback) as T;

const asString = (value: unknown): string => (typeof value === "string" ? value : String(value ?? ""));

const TRUNCATE_LEEWAY = 5; // jinja2 policy "truncate.leeway"

function truncate(operand: unknown, args: unknown[], kwargs: Map<string, unknown>): string {
  const s = asString(operand);
  const length = arg(args, kwargs, 0, "length", 255);
  const killwords = arg(args, kwargs, 1, "killwords", false);
  const end = arg(args, kwargs, 2, "end", "...");
  const leeway = arg<number | null>(args, kwargs, 3, "leeway", null) ?? TRUNCATE_LEEWAY;
  if ([...s].length <= length + leeway) return s;
  const head = [...s].slice(0, length - [...end].length).join("");
  if (killwords) return head + end;
  const cut = head.lastIndexOf(" ");
  return (cut === -1 ? head : head.slice(0, cut)) + end;
}

function wordcount(operand: unknown): number {
  return asString(operand).match(/[\p{L}\p{N}_]+/gu)?.length ?? 0;
}

/**
 * Python's round(): correctly rounded on the double's exact decimal value, ties to even.
 * (4.55 is really 4.5499…, so round(4.55, 1) is 4.5.) toFixed gives that exact expansion.
 */
export function roundHalfEven(value: number, precision: number): number {
  if (!Number.isFinite(value)) return value;
  const exact = Math.abs(value).toFixed(Math.min(100, precision + 40));
  const point = exact.indexOf(".");
  const keep = exact.slice(0, point + 1 + precision).replace(/\.$/, "");
  const rest = exact.slice(point + 1 + precision);
  const digits = keep.replace(".", "");
  let n = BigInt(digits);
  const first = rest[0] ?? "0";
  const tail = rest.slice(1);
  const roundUp = first > "5" || (first === "5" && (/[1-9]/.test(tail) || n % 2n === 1n));
  if (roundUp) n += 1n;
  const result = Number(n) / 10 ** precision;
  return value < 0 ? -result : result;
}

function round(operand: unknown, args: unknown[], kwargs: Map<string, unknown>): PyFloat {
  const value = Number(operand);
  const precision = arg(args, kwargs, 0, "precision", 0);
  const method = arg<string>(args, kwargs, 1, "method", "common");
  if (method === "common") return new PyFloat(roundHalfEven(value, precision));
  if (method !== "ceil" && method !== "floor") throw new Error("method must be common, ceil or floor");
  const factor = 10 ** precision;
  return new PyFloat(Math[method](value * factor) / factor);
}

function indent(operand: unknown, args: unknown[], kwargs: Map<string, unknown>): string {
  const width = arg<number | string>(args, kwargs, 0, "width", 4);
  const first = arg(args, kwargs, 1, "first", false);
  const blank = arg(args, kwargs, 2, "blank", false);
  const pad = typeof width === "string" ? width : " ".repeat(width);
  const lines = (asString(operand) + "\n").split(/\r\n|\r|\n/).slice(0, -1);
  let out: string;
  if (blank) out = lines.join(`\n${pad}`);
  else out = lines.map((line, i) => (i === 0 || line === "" ? line : pad + line)).join("\n");
  return first ? pad + out : out;
}

/** CPython's str.center: the odd extra space goes left only when both margin and width are odd. */
function center(operand: unknown, args: unknown[], kwargs: Map<string, unknown>): string {
  const s = asString(operand);
  const width = arg(args, kwargs, 0, "width", 80);
  const margin = width - [...s].length;
  if (margin <= 0) return s;
  const left = Math.floor(margin / 2) + (margin & width & 1);
  return " ".repeat(left) + s + " ".repeat(margin - left);
}

/** Jinja2's title: each word (split at whitespace, "-", "(", "{", "[", "<") gets one capital. */
function title(operand: unknown): string {
  return asString(operand)
    .split(/([-\s({[<]+)/u)
    .map((part) => (part ? capitalize(part) : part))
    .join("");
}

/** Python's str.capitalize: the first character upper case, the rest lower case. */
function capitalize(operand: unknown): string {
  const chars = [...asString(operand)];
  if (chars.length === 0) return "";
  return (chars[0] as string).toUpperCase() + chars.slice(1).join("").toLowerCase();
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" };

function escape(operand: unknown): string {
  return asString(operand).replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);
}

export const EXTRA_FILTERS: ReadonlyMap<string, FilterFn> = new Map<string, FilterFn>([
  ["truncate", truncate],
  ["wordcount", wordcount],
  ["round", round],
  ["indent", indent],
  ["center", center],
  ["escape", escape],
  ["title", title],
  ["capitalize", capitalize],
  ["e", escape],
]);
