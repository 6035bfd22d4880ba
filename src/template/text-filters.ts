/**
 * Jinja2's string filters where @huggingface/jinja lacks them or differs from Python (jinja2 3.1,
 * markupsafe 3.0): `wordwrap` (Python's textwrap), `striptags`, `xmlattr`, `tojson` (sorted
 * keys, ASCII, HTML-safe), `trim(chars)`, `reverse` of a string, `string` and `list` of any value,
 * and `int(default, base)`. Operands are runtime values; results are plain JS values.
 */
import { arg, flag, type Kwargs, type Value } from "./runtime-value";
import { pyStr } from "./python-str";

// textwrap's whitespace is string.whitespace (ASCII); its \w and letters are Unicode, as in Python's `re`.
const WS = "\\t\\n\\x0b\\x0c\\r ";
const W = "[\\p{L}\\p{N}_]";
const WORD_PUNCT = "[\\p{L}\\p{N}_!\"'&.,?]";
const LETTER = "[\\p{L}\\p{Nl}\\p{No}_]";
const NWS = `[^${WS}]`;
/** textwrap's wordsep_re (CPython 3.12). */
const WORDSEP = new RegExp(
  `[${WS}]+|(?<=${WORD_PUNCT})-{2,}(?=${W})|${NWS}+?(?:-(?:(?<=${LETTER}{2}-)|(?<=${LETTER}-${LETTER}-))(?=${LETTER}-?${LETTER})|(?=[${WS}]|$)|(?<=${WORD_PUNCT})(?=-{2,}${W}))`,
  "gu",
);
const WORDSEP_SIMPLE = new RegExp(`([${WS}]+)`);

/** re.split(wordsep_re, text) without the empty pieces: separators and the text between them. */
function chunksOf(text: string, onHyphens: boolean): string[] {
  if (!onHyphens) return text.split(WORDSEP_SIMPLE).filter((c) => c !== "");
  const out: string[] = [];
  let at = 0;
  for (const match of text.matchAll(WORDSEP)) {
    if (match.index > at) out.push(text.slice(at, match.index));
    if (match[0]) out.push(match[0]);
    at = match.index + match[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/** A chunk as code points, `from` of them already taken by earlier lines (a long word broken across lines). */
interface Chunk {
  cps: string[];
  from: number;
}

const chunkLength = (c: Chunk) => c.cps.length - c.from;
const chunkText = (c: Chunk) => (c.from === 0 ? c.cps.join("") : c.cps.slice(c.from).join(""));
function isBlank(c: Chunk): boolean {
  for (let i = c.from; i < c.cps.length; i++) if ((c.cps[i] as string).trim() !== "") return false;
  return true;
}

/**
 * textwrap.TextWrapper(width, expand_tabs=False, replace_whitespace=False, …).wrap(text), in time
 * linear in the text: a long word broken over many lines is read through an offset, never copied
 * again for each line (CPython slices it line by line; here that was quadratic: 16 s for 40k characters at width 1).
 */
function wrapLine(text: string, width: number, breakLong: boolean, onHyphens: boolean): string[] {
  if (!(width > 0) || !Number.isFinite(width)) throw new Error(`invalid width ${width} (must be > 0)`); // NaN never fits a chunk: it would loop forever
  const chunks: Chunk[] = chunksOf(text, onHyphens)
    .reverse()
    .map((c) => ({ cps: [...c], from: 0 }));
  const lines: string[] = [];
  while (chunks.length > 0) {
    const line: string[] = [];
    let used = 0;
    if (lines.length > 0 && isBlank(chunks.at(-1) as Chunk)) chunks.pop();
    while (chunks.length > 0 && used + chunkLength(chunks.at(-1) as Chunk) <= width) {
      const chunk = chunks.pop() as Chunk;
      line.push(chunkText(chunk));
      used += chunkLength(chunk);
    }
    const next = chunks.at(-1);
    if (next && chunkLength(next) > width) {
      const spaceLeft = width < 1 ? 1 : width - used; // 0 on a full line: an empty piece, dropped below
      if (breakLong) {
        let end = spaceLeft;
        if (onHyphens && chunkLength(next) > spaceLeft) {
          const head = next.cps.slice(next.from, next.from + spaceLeft);
          const hyphen = head.lastIndexOf("-");
          if (hyphen > 0 && head.slice(0, hyphen).some((c) => c !== "-")) end = hyphen + 1;
        }
        const piece = next.cps.slice(next.from, next.from + end).join("");
        line.push(piece);
        next.from += end;
      } else if (line.length === 0) {
        line.push(chunkText(chunks.pop() as Chunk));
      }
    }
    if (line.length > 0 && (line.at(-1) as string).trim() === "") line.pop(); // each piece is looked at once: linear
    if (line.length > 0) lines.push(line.join(""));
  }
  return lines;
}

/** Python's str.splitlines(). */
function splitlines(s: string): string[] {
  // eslint-disable-next-line no-control-regex -- Python's whitespace and line breaks include these control characters
  const lines = s.split(/\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** wordwrap(width=79, break_long_words=True, wrapstring=None, break_on_hyphens=True). */
export function wordwrap(operand: Value, args: Value[], kwargs: Kwargs): string {
  const width = Number(arg(args, kwargs, 0, "width")?.value ?? 79);
  const breakLong = flag(args, kwargs, 1, "break_long_words", true);
  const wrapValue = arg(args, kwargs, 2, "wrapstring");
  const wrapstring = wrapValue === undefined || wrapValue.type === "NullValue" ? "\n" : pyStr(wrapValue);
  const onHyphens = flag(args, kwargs, 3, "break_on_hyphens", true);
  return splitlines(pyStr(operand))
    .map((line) => wrapLine(line, width, breakLong, onHyphens).join(wrapstring))
    .join(wrapstring);
}

const NAMED_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** html.unescape for numeric references and the common named ones. */
function unescape(s: string): string {
  return s.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref.startsWith("#")) {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd";
    }
    return NAMED_ENTITIES[ref] ?? whole;
  });
}

/** Output built by appending, with its last characters at hand (a comment mark can straddle a cut). */
class Appended {
  readonly #pieces: string[] = [];
  tail = ""; // the last ≤ 3 characters

  push(s: string): void {
    if (!s) return;
    this.#pieces.push(s);
    this.tail = (this.tail + s).slice(-3);
  }

  /** Drops the last `n` (≤ 3) characters. */
  drop(n: number): void {
    let left = n;
    while (left > 0) {
      const last = this.#pieces.pop() as string;
      if (last.length > left) this.#pieces.push(last.slice(0, last.length - left));
      left -= Math.min(left, last.length);
    }
    let tail = "";
    for (let i = this.#pieces.length - 1; i >= 0 && tail.length < 3; i--) tail = (this.#pieces[i] as string) + tail;
    this.tail = tail.slice(-3);
  }

  toString(): string {
    return this.#pieces.join("");
  }
}

/**
 * markupsafe's comment removal: the first "<!--" of the text as it stands (possibly formed by an
 * earlier cut) up to the next "-->", again and again, in one pass.
 */
function stripComments(value: string): string {
  const out = new Appended();
  let pos = 0;
  for (;;) {
    const t = out.tail.length;
    const k = (out.tail + value.slice(pos, pos + 3)).indexOf("<!--");
    if (k !== -1 && k < t) {
      // The mark starts in what is already out: look for its end from there, across the cut.
      const c = (out.tail.slice(k) + value.slice(pos, pos + 2)).indexOf("-->");
      const inCut = c !== -1 && c < t - k;
      const close = inCut ? -1 : value.indexOf("-->", pos);
      if (!inCut && close === -1) break;
      out.drop(t - k);
      pos = inCut ? pos + c + 3 - (t - k) : close + 3;
      continue;
    }
    const start = value.indexOf("<!--", pos);
    const close = start === -1 ? -1 : value.indexOf("-->", start);
    if (close === -1) break;
    out.push(value.slice(pos, start));
    pos = close + 3;
  }
  out.push(value.slice(pos));
  return out.toString();
}

/** markupsafe's tag removal: "<" up to the next ">", in one pass (the output never holds a "<" that had one). */
function stripTags(value: string): string {
  const out: string[] = [];
  let pos = 0;
  for (;;) {
    const start = value.indexOf("<", pos);
    const close = start === -1 ? -1 : value.indexOf(">", start);
    if (close === -1) break;
    out.push(value.slice(pos, start));
    pos = close + 1;
  }
  out.push(value.slice(pos));
  return out.join("");
}

/** markupsafe 3.0's Markup.striptags: comments, then tags, removed; whitespace collapsed; entities unescaped. */
export function striptags(operand: Value): string {
  const value = stripTags(stripComments(pyStr(operand)));
  // eslint-disable-next-line no-control-regex -- Python's whitespace and line breaks include these control characters
  const words = value.split(/[\s\u001c-\u001f]+/);
  return unescape(words.filter(Boolean).join(" "));
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" };
const htmlEscape = (s: string) => s.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);

/** xmlattr(autospace=True): ` key="value"` pairs, escaped; None and undefined values left out. */
export function xmlattr(operand: Value, args: Value[], kwargs: Kwargs): string {
  if (operand.type !== "ObjectValue") throw new Error("xmlattr: a mapping is required");
  const items: string[] = [];
  for (const [key, value] of operand.value as Map<string, Value>) {
    if (value.type === "NullValue" || value.type === "UndefinedValue") continue;
    if (/[\s/>=]/.test(key)) throw new Error(`Invalid character in attribute name: '${key}'`);
    items.push(`${htmlEscape(key)}="${htmlEscape(pyStr(value))}"`);
  }
  const out = items.join(" ");
  return flag(args, kwargs, 0, "autospace", true) && out ? ` ${out}` : out;
}

function asciiJsonString(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Python's json.dumps(value, sort_keys=True[, indent]) of a runtime value. */
function pyJson(v: Value, indent: number | null, depth: number): string {
  const pad = (d: number) => (indent === null ? "" : `\n${" ".repeat(indent * d)}`);
  const sep = indent === null ? ", " : ",";
  switch (v.type) {
    case "StringValue":
      return asciiJsonString(v.value as string);
    case "IntegerValue":
    case "FloatValue":
      return pyStr(v);
    case "BooleanValue":
      return v.value ? "true" : "false";
    case "NullValue":
      return "null";
    case "ArrayValue":
    case "TupleValue": {
      const values = v.value as Value[];
      if (values.length === 0) return "[]";
      return `[${values.map((x) => pad(depth + 1) + pyJson(x, indent, depth + 1)).join(sep)}${pad(depth)}]`;
    }
    case "ObjectValue": {
      const entries = [...(v.value as Map<string, Value>).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      if (entries.length === 0) return "{}";
      return `{${entries.map(([k, x]) => `${pad(depth + 1)}${asciiJsonString(k)}: ${pyJson(x, indent, depth + 1)}`).join(sep)}${pad(depth)}}`;
    }
    default:
      throw new Error(`Object of type ${v.type} is not JSON serializable`);
  }
}

/** tojson(indent=None): Jinja2's htmlsafe_json_dumps. */
export function tojson(operand: Value, args: Value[], kwargs: Kwargs): string {
  const indentValue = arg(args, kwargs, 0, "indent");
  const indent = indentValue && indentValue.type !== "NullValue" ? Number(indentValue.value) : null;
  return pyJson(operand, indent, 0).replaceAll("<", "\\u003c").replaceAll(">", "\\u003e").replaceAll("&", "\\u0026").replaceAll("'", "\\u0027");
}

/** trim(chars=None): Python's str.strip(chars). */
export function trim(operand: Value, args: Value[], kwargs: Kwargs): string {
  const s = pyStr(operand);
  const chars = arg(args, kwargs, 0, "chars");
  // eslint-disable-next-line no-control-regex -- Python's whitespace and line breaks include these control characters
  if (!chars || chars.type === "NullValue") return s.replace(/^[\s\u001c-\u001f]+|[\s\u001c-\u001f]+$/g, "");
  const set = new Set([...pyStr(chars)]);
  const cps = [...s];
  let [start, end] = [0, cps.length];
  while (start < end && set.has(cps[start] as string)) start++;
  while (end > start && set.has(cps[end - 1] as string)) end--;
  return cps.slice(start, end).join("");
}

/** int(default=0, base=10): Python's int() of a string in `base` (prefixes, `_` separators), of a number, else int(float()), else default. */
export function toInt(operand: Value, args: Value[], kwargs: Kwargs): number | Value {
  const fallback = arg(args, kwargs, 0, "default");
  const base = Number(arg(args, kwargs, 1, "base")?.value ?? 10);
  const asDefault = () => fallback ?? 0;
  if (operand.type === "IntegerValue") return operand.value as number;
  if (operand.type === "FloatValue") return Number.isFinite(operand.value) ? Math.trunc(operand.value as number) : asDefault();
  if (operand.type === "BooleanValue") return operand.value ? 1 : 0;
  if (operand.type !== "StringValue") return asDefault();
  const parsed = parsePyInt((operand.value as string).trim(), base);
  if (parsed !== null) return parsed;
  const float = Number((operand.value as string).trim().replaceAll("_", ""));
  return (operand.value as string).trim() !== "" && Number.isFinite(float) ? Math.trunc(float) : asDefault();
}

const PREFIXES: Record<string, number> = { "0x": 16, "0o": 8, "0b": 2 };

function parsePyInt(text: string, base: number): number | null {
  let s = text;
  let sign = 1;
  if (s.startsWith("-") || s.startsWith("+")) {
    sign = s.startsWith("-") ? -1 : 1;
    s = s.slice(1);
  }
  let radix = base;
  const prefix = PREFIXES[s.slice(0, 2).toLowerCase()];
  if (prefix && (base === 0 || base === prefix)) {
    radix = prefix;
    s = s.slice(2).replace(/^_/, "");
  } else if (base === 0) {
    if (/^0+(_?0)*$/.test(s)) return 0;
    if (s.startsWith("0")) return null;
    radix = 10;
  }
  if (radix < 2 || radix > 36 || !/^[0-9a-z]+(_[0-9a-z]+)*$/i.test(s)) return null;
  const digits = s.replaceAll("_", "");
  if ([...digits.toLowerCase()].some((c) => parseInt(c, 36) >= radix)) return null;
  return sign * parseInt(digits, radix);
}

/** reverse of a string: by code point (a list is reversed by the renderer). */
export function reverseString(operand: Value): string {
  return [...pyStr(operand)].reverse().join("");
}
