/**
 * Jinja2's tests without an argument where @huggingface/jinja's differ from Python's (jinja2/tests.py
 * 3.1), and `float`: a dict and a tuple are iterable and sequences, a bool is a number but not an
 * integer, and `lower`/`upper` need a cased character, as str.islower()/isupper() do.
 */
import type { Value } from "./py-compare";
import { pyStr } from "./python-str";

const CONTAINERS = new Set(["ArrayValue", "TupleValue", "StringValue", "ObjectValue"]);
const CASED = /[\p{Lu}\p{Ll}\p{Lt}]/u;

export const PY_TESTS: ReadonlyMap<string, (operand: Value) => boolean> = new Map([
  ["iterable", (v: Value) => CONTAINERS.has(v.type)],
  ["sequence", (v: Value) => CONTAINERS.has(v.type)],
  ["number", (v: Value) => v.type === "IntegerValue" || v.type === "FloatValue" || v.type === "BooleanValue"],
  ["integer", (v: Value) => v.type === "IntegerValue"],
  ["float", (v: Value) => v.type === "FloatValue"],
  ["lower", (v: Value) => CASED.test(pyStr(v)) && !/[\p{Lu}\p{Lt}]/u.test(pyStr(v))],
  ["upper", (v: Value) => CASED.test(pyStr(v)) && !/[\p{Ll}\p{Lt}]/u.test(pyStr(v))],
]);
