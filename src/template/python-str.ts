/**
 * Python's str() and repr() of Jinja runtime values, so `{{ item }}` renders a dict as
 * `{'title': 'x'}`, true as `True` and null as `None`, exactly as Jinja2 does.
 */
interface RuntimeLike {
  type: string;
  value: unknown;
  toString(): string;
}

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
      return `{${[...(v.value as Map<string, RuntimeLike>).entries()]
        .map(([k, val]) => `${pyReprString(k)}: ${pyRepr(val)}`)
        .join(", ")}}`;
    default:
      return pyStr(v);
  }
}

export function pyStr(v: RuntimeLike): string {
  switch (v.type) {
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
