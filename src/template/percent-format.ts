/**
 * Jinja2's `format` filter: Python's `str % args` (printf-style formatting) on Jinja runtime
 * values — `{{ "%s-%05.2f" | format(a, b) }}`, `{{ "%(name)s" | format(name=x) }}`. Conversions
 * s r a d i u f F e E g G x X o c and %%; flags `#0- +`, width and precision (numbers, not `*`).
 * Anything else is an error, as in Python.
 */
import { pyRepr, pyStr } from "./python-str";

import type { Value } from "./runtime-value";

export const SPEC = /%(?:\(([^)]*)\))?([#0\- +]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g;

function numberOf(v: Value, conversion: string): number {
  if (v.type === "IntegerValue" || v.type === "FloatValue") return v.value as number;
  if (v.type === "BooleanValue") return v.value ? 1 : 0;
  throw new Error(`%${conversion} format: a real number is required, not ${v.type}`);
}

function pad(body: string, sign: string, flags: string, width: number, numeric: boolean): string {
  const total = sign.length + body.length;
  if (total >= width) return sign + body;
  if (flags.includes("-")) return (sign + body).padEnd(width);
  if (numeric && flags.includes("0")) return sign + body.padStart(width - sign.length, "0");
  return (sign + body).padStart(width);
}

/** Python's %g: shortest of fixed and exponent forms for `precision` significant digits. */
function general(n: number, precision: number, alternate: boolean): string {
  const p = precision === 0 ? 1 : precision;
  if (n === 0) return alternate ? (0).toFixed(p - 1) : "0";
  const exponent = Math.floor(Math.log10(Math.abs(Number(n.toPrecision(p)))));
  let out = exponent < -4 || exponent >= p ? pyExponent(n, p - 1) : n.toFixed(Math.max(0, p - 1 - exponent));
  if (!alternate) out = out.replace(/\.?0+(e|$)/, "$1").replace(/\.(e|$)/, "$1");
  return out;
}

/** JS exponent form as Python writes it: at least two exponent digits (`1.5e+07`). */
function pyExponent(n: number, digits: number): string {
  return n.toExponential(digits).replace(/e([+-])(\d)$/, "e$10$2");
}

function convert(v: Value, conversion: string, flags: string, precision: number | null): { body: string; sign: string; numeric: boolean } {
  switch (conversion) {
    case "s":
      return { body: precision === null ? pyStr(v) : [...pyStr(v)].slice(0, precision).join(""), sign: "", numeric: false };
    case "r":
    case "a":
      return { body: precision === null ? pyRepr(v) : pyRepr(v).slice(0, precision), sign: "", numeric: false };
    case "c": {
      if (v.type === "StringValue" && [...(v.value as string)].length === 1) return { body: v.value as string, sign: "", numeric: false };
      return { body: String.fromCodePoint(numberOf(v, conversion)), sign: "", numeric: false };
    }
  }
  const n = numberOf(v, conversion);
  const sign = n < 0 || Object.is(n, -0) ? "-" : flags.includes("+") ? "+" : flags.includes(" ") ? " " : "";
  const a = Math.abs(n);
  const alternate = flags.includes("#");
  let body: string;
  switch (conversion) {
    case "d":
    case "i":
    case "u":
      body = Math.trunc(a).toString();
      break;
    case "f":
    case "F":
      body = Number.isFinite(a) ? a.toFixed(precision ?? 6) : String(a).toLowerCase().replace("infinity", "inf");
      if (alternate && !body.includes(".")) body += ".";
      break;
    case "e":
    case "E":
      body = pyExponent(a, precision ?? 6);
      break;
    case "g":
    case "G":
      body = general(a, precision ?? 6, alternate);
      break;
    case "x":
    case "X":
      body = (alternate ? "0x" : "") + Math.trunc(a).toString(16);
      break;
    case "o":
      body = (alternate ? "0o" : "") + Math.trunc(a).toString(8);
      break;
    default:
      throw new Error(`unsupported format character '${conversion}'`);
  }
  if (conversion === conversion.toUpperCase() && conversion !== "F") body = body.toUpperCase();
  if (conversion === "F") body = body.toUpperCase();
  return { body, sign, numeric: true };
}

/** `template % args` (positional) or `template % kwargs` (named), as Python does it. */
export function percentFormat(template: string, args: Value[], kwargs: Map<string, Value>): string {
  if (args.length > 0 && kwargs.size > 0) throw new Error("format: give positional or keyword arguments, not both");
  let next = 0;
  const out = template.replace(
    SPEC,
    (_whole, key: string | undefined, flags: string, width: string | undefined, precision: string | undefined, conversion: string) => {
      if (conversion === "%") return "%";
      let value: Value | undefined;
      if (key !== undefined) {
        value = kwargs.get(key);
        if (!value) throw new Error(`format: no value named '${key}'`);
      } else {
        value = args[next++];
        if (!value) throw new Error("format: not enough arguments for format string");
      }
      const { body, sign, numeric } = convert(value, conversion, flags, precision === undefined ? null : Number(precision));
      return pad(body, sign, flags, width === undefined ? 0 : Number(width), numeric);
    },
  );
  if (kwargs.size === 0 && next < args.length) throw new Error("format: not all arguments converted during string formatting");
  return out;
}
