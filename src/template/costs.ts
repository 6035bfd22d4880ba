/**
 * The template runtime's cost model: for every filter, test, method and global function the
 * renderer has, an upper bound on what one call may allocate and compute, from its operand's
 * size and its arguments. The renderer charges the bound to the render budget *before* the call
 * runs (./jinja), on the one path every call takes — written directly, reached through
 * `map`/`select`/`selectattr`, or named as a test — so a call that would pass the budget fails
 * cleanly instead of running. A filter or test is supported only if it is declared here
 * (./features builds its lists from these tables), so a new one cannot forget its bound.
 *
 * A declaration may scan its operand once (never more work than the call itself does) and never
 * builds the result. Bounds are in:
 * - `chars`: the longest string the call produces;
 * - `list`: the longest list (or dict) it produces;
 * - `alloc`: all characters and elements it allocates (nested lists and strings included);
 * - `work`: element operations (comparisons, scans, copies), COMPARISONS_PER_STEP to a step.
 */
import { SPEC } from "./percent-format";
import { JSON_ONE_LINE, jsonIndented, lengthOf, nodesBound, PPRINT, printedBound, STR, URL } from "./sizes";
import { arg, type Kwargs, type Value } from "./runtime-value";

export interface Cost {
  chars?: number;
  list?: number;
  alloc?: number;
  work?: number;
}

/** One call as its declaration sees it; `cap` is the render's string cap (sizes past it need no precision). */
export interface Call {
  operand: Value;
  args: Value[];
  kwargs: Kwargs;
  cap: number;
}

export type Declaration = (call: Call) => Cost;

const FREE: Declaration = () => ({});
const CASE_EXPANSION = 3; // a UTF-16 unit may upper-case to three ("ΐ" → "Ϊ́")
const HTML_ESCAPE_EXPANSION = 5; // `"` → `&#34;`

const str = (v: Value | undefined, cap: number) => printedBound(v, STR, cap);
const num = (v: Value | undefined, fallback: number) => (typeof v?.value === "number" && Number.isFinite(v.value) ? v.value : fallback);
/** Python's truth of an argument, read from its value alone (declarations also see constants made at submission). */
function truth(v: Value | undefined): boolean {
  if (!v) return false;
  return v.type === "ArrayValue" || v.type === "TupleValue" || v.type === "ObjectValue" ? lengthOf(v) > 0 : Boolean(v.value);
}
const linear: Declaration = ({ operand, cap }) => ({ work: str(operand, cap) });
const scanned =
  (expansion: number): Declaration =>
  ({ operand, cap }) => {
    const n = str(operand, cap);
    return { chars: n * expansion, work: n };
  };
/** A new list of the operand's elements (reverse, list, select …), `perElement` operations each. */
const copied =
  (perElement: number): Declaration =>
  ({ operand }) => {
    const n = lengthOf(operand);
    return { list: n, work: n * perElement };
  };
const sorted: Declaration = ({ operand }) => {
  const n = lengthOf(operand);
  return { list: n, alloc: 3 * n, work: n * Math.ceil(Math.log2(n + 1)) };
};
/** Lines in a string (each may get a prefix). */
function linesOf(s: string): number {
  let lines = 1;
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) lines++;
  for (let i = s.indexOf("\r"); i !== -1; i = s.indexOf("\r", i + 1)) lines++;
  return lines;
}
const text = (v: Value): string => (v.type === "StringValue" ? (v.value as string) : "");

/** `select('in', big)` and friends: each element against the test's argument (selectattr: after reading its attribute path). */
const testedEach =
  (argAt: number): Declaration =>
  ({ operand, args }) => {
    const n = lengthOf(operand);
    const path = argAt === 2 ? lengthOf(args[0]) : 0;
    return { list: n, work: n * (1 + path + lengthOf(args[argAt])) };
  };

/** A test with an argument, as `x is in y` or `| __test_in(y)`: a deep comparison of each element. */
const comparedTo: Declaration = ({ operand, args, cap }) => ({ work: lengthOf(args[0]) * nodesBound(operand, cap) + nodesBound(args[0], cap) });

function indentCost({ operand, args, kwargs, cap }: Call): Cost {
  const width = arg(args, kwargs, 0, "width");
  const pad = width?.type === "StringValue" ? (width.value as string).length : num(width, 4);
  const s = str(operand, cap);
  // Every line but the first gets the pad (the first too with first=True); a str() of a container is one line.
  const padded = (operand.type === "StringValue" ? linesOf(text(operand)) - 1 : 0) + (truth(arg(args, kwargs, 1, "first")) ? 1 : 0);
  return { chars: s + padded * Math.max(0, pad), work: s };
}

function wordwrapCost({ operand, args, kwargs, cap }: Call): Cost {
  const n = str(operand, cap);
  const width = Math.max(1, num(arg(args, kwargs, 0, "width"), 79));
  const wrap = arg(args, kwargs, 2, "wrapstring");
  const wrapChars = wrap && wrap.type !== "NullValue" ? str(wrap, cap) : 1;
  // A line ends where the next word does not fit: with the next word it is longer than the width,
  // so two lines hold more than `width` characters unless a word is broken (break_long_words).
  const lines = Math.min(n + 1, Math.ceil((2 * n) / width) + linesOf(text(operand)) + 1);
  return { chars: n + lines * wrapChars, alloc: 2 * n + lines * wrapChars, work: 4 * n };
}

function formatCost({ operand, args, kwargs, cap }: Call): Cost {
  const template = text(operand);
  const argChars = args.map((a) => str(a, cap));
  const keyChars = Math.max(0, ...[...kwargs.values()].map((v) => str(v, cap)));
  let chars = template.length;
  let next = 0;
  for (const [, key, , width, precision] of template.matchAll(SPEC)) {
    const value = key !== undefined ? keyChars : (argChars[next++] ?? 0);
    chars += Number(width ?? 0) + Number(precision ?? 0) + value + 32;
  }
  return { chars, work: chars };
}

/** `batch(n, fill)`: rows of n; with a fill the last row is padded up to n. */
function batchCost({ operand, args, kwargs }: Call): Cost {
  const n = lengthOf(operand);
  const size = Math.max(1, num(arg(args, kwargs, 0, "linecount"), 1));
  const fill = arg(args, kwargs, 1, "fill_with");
  const rows = Math.ceil(n / size);
  const padded = fill && fill.type !== "NullValue" ? Math.min(size, n === 0 ? 0 : size) : 0;
  return { list: Math.max(rows, Math.min(size, n) + padded), alloc: rows + n + padded, work: n + rows };
}

/** `slice(k, fill)`: k columns, each may get one fill. */
function sliceCost({ operand, args, kwargs }: Call): Cost {
  const n = lengthOf(operand);
  const k = Math.max(1, num(arg(args, kwargs, 0, "slices"), 1));
  const fill = arg(args, kwargs, 1, "fill_with");
  const perColumn = Math.ceil(n / k) + (fill && fill.type !== "NullValue" ? 1 : 0);
  return { list: Math.max(k, perColumn), alloc: 2 * k + n, work: k + n };
}

/** map: one step an element; a filter named by `map` declares its own cost on each call. */
const mapCost: Declaration = ({ operand }) => ({ list: lengthOf(operand), work: lengthOf(operand) });

function replaceCost({ operand, args }: Call): Cost {
  const [from, to] = args;
  if (operand.type !== "StringValue" || from?.type !== "StringValue" || to?.type !== "StringValue") return {};
  const s = operand.value as string;
  const [oldValue, newValue] = [from.value as string, to.value as string];
  let count = 0;
  if (oldValue === "") count = s.length + 1;
  else for (let at = s.indexOf(oldValue); at !== -1; at = s.indexOf(oldValue, at + oldValue.length)) count++;
  return { chars: s.length + count * Math.max(0, newValue.length - oldValue.length), work: s.length };
}

function tojsonCost({ operand, args, kwargs, cap }: Call): Cost {
  const indent = arg(args, kwargs, 0, "indent");
  const printing = indent && indent.type !== "NullValue" ? jsonIndented(Math.max(0, num(indent, 0))) : JSON_ONE_LINE;
  const chars = printedBound(operand, printing, cap);
  return { chars, alloc: 2 * chars, work: chars };
}

const printed =
  (printing: typeof STR): Declaration =>
  ({ operand, cap }) => {
    const chars = printedBound(operand, printing, cap);
    return { chars, alloc: 2 * chars, work: chars };
  };

/** join(d=''): each element's str() and a separator between two. */
function joinCost({ operand, args, kwargs, cap }: Call): Cost {
  const elements = operand.type === "ArrayValue" || operand.type === "TupleValue" ? (operand.value as Value[]) : [];
  const separator = str(arg(args, kwargs, 0, "d"), cap);
  let chars = operand.type === "StringValue" ? lengthOf(operand) * (1 + separator) : 0; // a string joins its characters
  for (const element of elements) {
    chars += str(element, cap) + separator;
    if (chars > cap) break;
  }
  return { chars, work: chars };
}

function centerCost({ operand, args, kwargs, cap }: Call): Cost {
  const chars = Math.max(str(operand, cap), num(arg(args, kwargs, 0, "width"), 80));
  return { chars, work: chars };
}

function trimCost({ operand, args, kwargs, cap }: Call): Cost {
  const n = str(operand, cap);
  return { chars: n, work: n * (1 + lengthOf(arg(args, kwargs, 0, "chars"))) };
}

function truncateCost({ operand, args, kwargs, cap }: Call): Cost {
  const n = str(operand, cap);
  return { chars: n + str(arg(args, kwargs, 2, "end"), cap), work: n };
}

/** sum of lists concatenates them (`start=[]`); of numbers, one addition an element. */
function sumCost({ operand, args, kwargs }: Call): Cost {
  const start = arg(args, kwargs, 1, "start");
  let elements = lengthOf(start);
  if (operand.type === "ArrayValue" || operand.type === "TupleValue") for (const v of operand.value as Value[]) elements += lengthOf(v);
  return { list: elements, work: elements + lengthOf(operand) };
}

/** Items of a dict as (key, value) tuples: a tuple and two slots an entry. */
const pairs: Declaration = ({ operand }) => ({ list: lengthOf(operand), alloc: 3 * lengthOf(operand), work: lengthOf(operand) });
const pairsSorted: Declaration = (call) => ({ ...sorted(call), alloc: 4 * lengthOf(call.operand) });

/** The filters, by the names templates use. */
export const FILTER_COSTS: Readonly<Record<string, Declaration>> = {
  abs: FREE,
  bool: FREE,
  default: FREE,
  d: FREE,
  safe: FREE,
  first: FREE,
  last: FREE,
  length: FREE,
  count: FREE,
  float: linear,
  int: linear,
  round: FREE,
  filesizeformat: FREE,
  wordcount: linear,
  capitalize: scanned(CASE_EXPANSION),
  lower: scanned(CASE_EXPANSION),
  upper: scanned(CASE_EXPANSION),
  title: scanned(CASE_EXPANSION),
  escape: scanned(HTML_ESCAPE_EXPANSION),
  e: scanned(HTML_ESCAPE_EXPANSION),
  striptags: scanned(1),
  string: printed(STR),
  pprint: printed(PPRINT),
  urlencode: printed(URL),
  xmlattr: ({ operand, cap }) => {
    const chars = printedBound(operand, STR, cap) * HTML_ESCAPE_EXPANSION;
    return { chars, work: chars };
  },
  tojson: tojsonCost,
  join: joinCost,
  center: centerCost,
  indent: indentCost,
  trim: trimCost,
  truncate: truncateCost,
  wordwrap: wordwrapCost,
  replace: replaceCost,
  format: formatCost,
  reverse: (call) => (call.operand.type === "StringValue" ? { chars: lengthOf(call.operand), work: lengthOf(call.operand) } : copied(1)(call)),
  list: ({ operand }) => ({ list: lengthOf(operand), alloc: 2 * lengthOf(operand), work: lengthOf(operand) }),
  sort: sorted,
  unique: ({ operand }) => ({ list: lengthOf(operand), alloc: 2 * lengthOf(operand), work: 2 * lengthOf(operand) }),
  groupby: (call) => ({ ...sorted(call), alloc: 5 * lengthOf(call.operand) }),
  dictsort: pairsSorted,
  items: pairs,
  map: mapCost,
  select: testedEach(1),
  reject: testedEach(1),
  selectattr: testedEach(2),
  rejectattr: testedEach(2),
  batch: batchCost,
  slice: sliceCost,
  sum: sumCost,
  min: copied(1),
  max: copied(1),
};

/** Tests without an argument: each looks at its operand once. */
const SCALAR_TESTS = [
  "boolean",
  "callable",
  "odd",
  "even",
  "false",
  "true",
  "none",
  "string",
  "number",
  "integer",
  "float",
  "iterable",
  "mapping",
  "sequence",
  "defined",
  "undefined",
];

/** Tests, by name: those with an argument (`divisibleby`, `in`, `eq` …) and those without. */
export const TEST_COSTS: Readonly<Record<string, Declaration>> = {
  ...Object.fromEntries(SCALAR_TESTS.map((name) => [name, FREE])),
  lower: linear,
  upper: linear,
  divisibleby: FREE,
  in: (call) => (call.operand.type === "StringValue" ? { work: lengthOf(call.args[0]) * (1 + lengthOf(call.operand)) } : comparedTo(call)),
  sameas: FREE,
  ...Object.fromEntries(
    ["eq", "equalto", "==", "ne", "!=", "gt", "greaterthan", ">", "ge", ">=", "lt", "lessthan", "<", "le", "<="].map((name) => [
      name,
      (({ operand, args, cap }) => ({ work: Math.min(nodesBound(operand, cap), nodesBound(args[0], cap)) })) as Declaration,
    ]),
  ),
};

/** Methods of strings and dicts (`s.split(',')`, `d.items()`), by name. */
export const METHOD_COSTS: Readonly<Record<string, Declaration>> = {
  upper: scanned(CASE_EXPANSION),
  lower: scanned(CASE_EXPANSION),
  title: scanned(CASE_EXPANSION),
  capitalize: scanned(CASE_EXPANSION),
  strip: scanned(1),
  lstrip: scanned(1),
  rstrip: scanned(1),
  startswith: ({ args }) => ({ work: 1 + lengthOf(args[0]) }),
  endswith: ({ args }) => ({ work: 1 + lengthOf(args[0]) }),
  split: ({ operand }) => ({ list: lengthOf(operand) + 1, alloc: 2 * lengthOf(operand) + 1, work: lengthOf(operand) }),
  replace: replaceCost,
  get: FREE,
  items: pairs,
  keys: copied(1),
  values: copied(1),
  dictsort: pairsSorted,
};

/** Global functions (`range(n)`); a macro is charged node by node as it runs. */
export const FUNCTION_COSTS: Readonly<Record<string, Declaration>> = {
  range: ({ args }) => {
    const [a, b, c] = args.map((x) => num(x, 0));
    const [from, to, step] = b === undefined ? [0, a ?? 0, 1] : [a ?? 0, b, c ?? 1];
    const length = step === 0 ? 0 : Math.max(0, Math.ceil((to - from) / step));
    return { list: length, work: length };
  },
  raise_exception: FREE,
  strftime_now: FREE,
};
