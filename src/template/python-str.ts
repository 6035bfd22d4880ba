/**
 * Python's str() and repr() of Jinja runtime values, so `{{ item }}` renders a dict as
 * `{'title': 'x'}`, true as `True` and null as `None`, exactly as Jinja2 does.
 */
import type { Value as RuntimeLike } from "./runtime-value";

function pyReprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = "";
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return quote + out + quote;
}

export function pyRepr(v: RuntimeLike): string {
  switch (v.type) {
    case "StringValue":
      return pyReprString(v.value as string);
    case "ArrayValue":
      return `[${(v.value as RuntimeLike[]).map(pyRepr).join(", ")}]`;
    case "TupleValue": {
      const items = (v.value as RuntimeLike[]).map(pyRepr);
      return items.length === 1 ? `(${items[0]},)` : `(${items.join(", ")})`;
    }
    case "ObjectValue":
    case "KeywordArgumentsValue":
      return `{${[...(v.value as Map<string, RuntimeLike>).entries()].map(([k, val]) => `${pyReprString(k)}: ${pyRepr(val)}`).join(", ")}}`;
    default:
      return pyStr(v);
  }
}

/** Python's repr() of a float: the shortest round-trip digits, in exponent form below 1e-4 and from 1e16. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mantissa, exponent] = Math.abs(x).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  const exp = Number(exponent);
  const sign = x < 0 ? "-" : "";
  if (exp < -4 || exp >= 16) {
    const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${body}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const fraction = digits.slice(exp + 1);
  return `${sign}${whole}.${fraction || "0"}`;
}

export function pyStr(v: RuntimeLike): string {
  switch (v.type) {
    case "FloatValue":
      return pyFloatRepr(v.value as number);
    case "StringValue":
      return v.value as string;
    case "BooleanValue":
      return v.value ? "True" : "False";
    case "NullValue":
      return "None";
    case "UndefinedValue":
      return "";
    case "FunctionValue":
      return "<function>"; // Python prints a repr (`<function …>`), never source code
    case "ArrayValue":
    case "TupleValue":
    case "ObjectValue":
    case "KeywordArgumentsValue":
      return pyRepr(v);
    default:
      return v.toString();
  }
}
