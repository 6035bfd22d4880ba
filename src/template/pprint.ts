/**
 * Jinja2's `pprint`: Python's pprint.pformat(value) with its defaults (width 80, indent 1, dicts
 * sorted, not compact), following CPython 3.12's PrettyPrinter: a value whose repr fits in what
 * is left of the line is written as its repr; a dict, list or tuple that does not is written one
 * element per line; a string that does not is cut at whitespace into adjacent literals.
 */
import type { Value } from "./py-compare";
import { pyRepr } from "./python-str";

const WIDTH = 80;
const len = (s: string) => [...s].length;

const sortedEntries = (v: Value) => [...(v.value as Map<string, Value>).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** Whether `s` has at most `max` code points, without counting a long string through. */
function fits(s: string, max: number): boolean {
  if (s.length <= max) return true;
  return s.length <= 2 * max && len(s) <= max; // a code point is one or two UTF-16 units
}

class Printer {
  out = "";
  readonly #reprs = new Map<Value, string>(); // each value's repr once, however deep it sits

  /** pprint's repr: Python's repr with every dict's keys sorted. */
  safeRepr(v: Value): string {
    const known = this.#reprs.get(v);
    if (known !== undefined) return known;
    let rep: string;
    switch (v.type) {
      case "ObjectValue":
        rep = `{${sortedEntries(v)
          .map(([k, x]) => `${pyRepr({ type: "StringValue", value: k, toString: () => k })}: ${this.safeRepr(x)}`)
          .join(", ")}}`;
        break;
      case "ArrayValue":
        rep = `[${(v.value as Value[]).map((x) => this.safeRepr(x)).join(", ")}]`;
        break;
      case "TupleValue": {
        const items = (v.value as Value[]).map((x) => this.safeRepr(x));
        rep = items.length === 1 ? `(${items[0]},)` : `(${items.join(", ")})`;
        break;
      }
      default:
        rep = pyRepr(v);
    }
    this.#reprs.set(v, rep);
    return rep;
  }

  format(v: Value, indent: number, allowance: number, level: number): void {
    const rep = this.safeRepr(v);
    if (fits(rep, WIDTH - indent - allowance)) {
      this.out += rep;
      return;
    }
    switch (v.type) {
      case "ObjectValue":
        return this.dict(v, indent, allowance, level + 1);
      case "ArrayValue":
        this.out += "[";
        this.items(v.value as Value[], indent, allowance + 1, level + 1);
        this.out += "]";
        return;
      case "TupleValue": {
        const values = v.value as Value[];
        const end = values.length === 1 ? ",)" : ")";
        this.out += "(";
        this.items(values, indent, allowance + end.length, level + 1);
        this.out += end;
        return;
      }
      case "StringValue":
        return this.string(v.value as string, indent, allowance, level + 1);
      default:
        this.out += rep;
    }
  }

  dict(v: Value, indent: number, allowance: number, level: number): void {
    this.out += "{";
    const entries = sortedEntries(v);
    const inner = indent + 1;
    entries.forEach(([key, value], i) => {
      const last = i === entries.length - 1;
      const rep = pyRepr({ type: "StringValue", value: key, toString: () => key });
      this.out += `${rep}: `;
      this.format(value, inner + len(rep) + 2, last ? allowance + 1 : 1, level);
      if (!last) this.out += `,\n${" ".repeat(inner)}`;
    });
    this.out += "}";
  }

  items(values: Value[], indent: number, allowance: number, level: number): void {
    const inner = indent + 1;
    values.forEach((v, i) => {
      if (i > 0) this.out += `,\n${" ".repeat(inner)}`;
      this.format(v, inner, i === values.length - 1 ? allowance : 1, level);
    });
  }

  string(s: string, indent: number, allowance: number, level: number): void {
    const repr = (x: string) => pyRepr({ type: "StringValue", value: x, toString: () => x });
    if (s.length === 0) {
      this.out += repr(s);
      return;
    }
    // splitlines(keepends=True), at every line boundary Python knows.
    // eslint-disable-next-line no-control-regex -- \v, \f and \x1c–\x1e end lines in Python
    const lines = s.match(/[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]|$)/g)?.filter((l) => l !== "") ?? [s];
    const top = level === 1;
    const at = top ? indent + 1 : indent;
    const room = top ? allowance + 1 : allowance;
    const chunks: string[] = [];
    let rep = "";
    lines.forEach((line, i) => {
      const lastLine = i === lines.length - 1;
      rep = repr(line);
      if (len(rep) <= WIDTH - at - (lastLine ? room : 0)) {
        chunks.push(rep);
        return;
      }
      const parts = line.match(/\S*\s*/g)?.filter((p) => p !== "") ?? [];
      let current = "";
      parts.forEach((part, j) => {
        const candidate = current + part;
        const max = WIDTH - at - (j === parts.length - 1 && lastLine ? room : 0);
        if (len(repr(candidate)) > max) {
          if (current) chunks.push(repr(current));
          current = part;
        } else current = candidate;
      });
      if (current) chunks.push(repr(current));
    });
    if (chunks.length === 1) {
      this.out += rep;
      return;
    }
    this.out += (top ? "(" : "") + chunks.join(`\n${" ".repeat(at)}`) + (top ? ")" : "");
  }
}

export function pprint(v: Value): string {
  const printer = new Printer();
  printer.format(v, 0, 0, 0);
  return printer.out;
}
