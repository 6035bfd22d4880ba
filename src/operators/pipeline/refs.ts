/**
 * References into a pipeline's shared store (v2 contract, "POST /v1/pipelines"): `${name}` or
 * `${name.path.to.field}`, with `[n]` for list positions. `name` is a pipeline input or an earlier
 * step's id. Parsing is strict (a submission names the bad part); resolution walks the store and
 * says whether the path exists, so a missing field is told apart from a JSON null.
 */
export type RefPath = (string | number)[];

export interface Ref {
  name: string;
  path: RefPath;
}

export type Parsed = { ok: true; ref: Ref } | { ok: false; message: string };

const WHOLE = /^\$\{(.+)\}$/; // the contract's pattern for a reference (batch.items must match it)
const IDENT = /^[a-zA-Z_][a-zA-Z0-9_]*/;
/** A name of the pipeline: a step id, an input's name, a batch alias (the contract's pattern). */
export const IDENTIFIER = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
export const MAX_REF_CHARS = 1_000;

import { PROTOTYPE_NAMES } from "../../lib/records";

/** An identifier that may name a step, an input or an alias: IDENTIFIER, and not a prototype name. */
export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name) && !PROTOTYPE_NAMES.has(name);
}

export const IDENTIFIER_RULE = "an identifier (letters, digits and _, not a digit first; not __proto__, constructor or prototype)";
const MAX_SEGMENTS = 64;

export function isReference(value: unknown): value is string {
  return typeof value === "string" && WHOLE.test(value);
}

export function parseRef(text: string): Parsed {
  if (text.length > MAX_REF_CHARS) return { ok: false, message: `a reference is at most ${MAX_REF_CHARS} characters` };
  const whole = WHOLE.exec(text);
  if (!whole) return { ok: false, message: "a reference looks like ${name} or ${name.path[0].field}" };
  const body = whole[1] as string;
  const head = IDENT.exec(body);
  if (!head) return { ok: false, message: `"${body}" does not start with a name (letters, digits and _, not a digit first)` };
  if (PROTOTYPE_NAMES.has(head[0])) return { ok: false, message: `"${head[0]}" is never a name here` };
  const path: RefPath = [];
  let rest = body.slice(head[0].length);
  while (rest.length > 0) {
    if (path.length >= MAX_SEGMENTS) return { ok: false, message: `a reference has at most ${MAX_SEGMENTS} path segments` };
    if (rest.startsWith(".")) {
      const field = IDENT.exec(rest.slice(1));
      if (!field) return { ok: false, message: `expected a field name after "." in "${body}"` };
      if (PROTOTYPE_NAMES.has(field[0])) return { ok: false, message: `"${field[0]}" is never a field name in a reference` };
      path.push(field[0]);
      rest = rest.slice(1 + field[0].length);
      continue;
    }
    const index = /^\[(0|[1-9][0-9]{0,8})\]/.exec(rest);
    if (!index) return { ok: false, message: `unexpected "${rest.slice(0, 20)}" in "${body}": use .field or [n]` };
    path.push(Number(index[1]));
    rest = rest.slice(index[0].length);
  }
  return { ok: true, ref: { name: head[0], path } };
}

export type Resolved = { found: true; value: unknown } | { found: false; at: string };

/** The value a reference points at in `store`, or where the walk stopped. */
export function resolveRef(store: Record<string, unknown>, ref: Ref): Resolved {
  if (!Object.hasOwn(store, ref.name)) return { found: false, at: ref.name };
  let current: unknown = store[ref.name];
  let at = ref.name;
  for (const segment of ref.path) {
    if (typeof segment === "number") {
      if (!Array.isArray(current) || segment >= current.length) return { found: false, at: `${at}[${segment}]` };
      current = current[segment];
      at = `${at}[${segment}]`;
    } else {
      if (typeof current !== "object" || current === null || Array.isArray(current) || !Object.hasOwn(current, segment)) {
        return { found: false, at: `${at}.${segment}` };
      }
      current = (current as Record<string, unknown>)[segment];
      at = `${at}.${segment}`;
    }
  }
  return { found: true, value: current };
}

/** The JSON type name the contract's messages use ("Batch items must be an array, got object"). */
export function jsonTypeName(value: unknown): "array" | "object" | "string" | "number" | "boolean" | "null" {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  const t = typeof value;
  return t === "string" || t === "number" || t === "boolean" ? t : "object";
}
