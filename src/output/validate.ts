/**
 * Output schemas: checked once at submission (400 `invalid_output_schema`), then used to validate
 * every item's output with @cfworker/json-schema (an interpreter; ajv compiles validators with
 * `new Function`, which workerd forbids). All errors are collected, not only the first.
 */
import { Validator, type OutputUnit, type Schema } from "@cfworker/json-schema";
import { ApiError } from "../lib/errors";

export type SchemaDraft = "2020-12" | "7";

export interface OutputValidator {
  validate(value: unknown): string[];
}

const DRAFT_07_URIS = ["http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema"];
const KNOWN_TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);
const MAX_ERRORS = 20;

export function schemaDraft(schema: Record<string, unknown>): SchemaDraft {
  return typeof schema.$schema === "string" && DRAFT_07_URIS.includes(schema.$schema) ? "7" : "2020-12";
}

/** Structural checks of a schema that @cfworker/json-schema would only trip over at validation time. */
function schemaProblems(schema: unknown, path: string, out: string[]): void {
  if (typeof schema === "boolean") return;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    out.push(`${path}: a schema must be an object or a boolean`);
    return;
  }
  const s = schema as Record<string, unknown>;
  const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
  for (const t of types) if (typeof t !== "string" || !KNOWN_TYPES.has(t)) out.push(`${path}.type: unknown type ${JSON.stringify(t)}`);
  if (s.required !== undefined && (!Array.isArray(s.required) || s.required.some((r) => typeof r !== "string"))) {
    out.push(`${path}.required: must be an array of strings`);
  }
  for (const key of ["properties", "patternProperties", "$defs", "definitions"]) {
    const map = s[key];
    if (map === undefined) continue;
    if (typeof map !== "object" || map === null || Array.isArray(map)) out.push(`${path}.${key}: must be an object`);
    else for (const [name, sub] of Object.entries(map)) schemaProblems(sub, `${path}.${key}.${name}`, out);
  }
  for (const key of ["items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"]) {
    if (s[key] !== undefined && !Array.isArray(s[key])) schemaProblems(s[key], `${path}.${key}`, out);
  }
  for (const key of ["allOf", "anyOf", "oneOf", "prefixItems"]) {
    const list = s[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length === 0) out.push(`${path}.${key}: must be a non-empty array`);
    else list.forEach((sub, i) => schemaProblems(sub, `${path}.${key}[${i}]`, out));
  }
  for (const key of ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "multipleOf"]) {
    if (s[key] !== undefined && typeof s[key] !== "number") out.push(`${path}.${key}: must be a number`);
  }
  if (s.pattern !== undefined) {
    try {
      new RegExp(String(s.pattern), "u");
    } catch {
      out.push(`${path}.pattern: not a valid regular expression`);
    }
  }
}

function describe(unit: OutputUnit): string {
  const where = unit.instanceLocation === "#" ? "the output" : unit.instanceLocation.replace(/^#/, "");
  return `${where}: ${unit.error}`;
}

export function compileOutputSchema(schema: unknown): OutputValidator {
  const problems: string[] = [];
  schemaProblems(schema, "output_schema", problems);
  if (problems.length === 0) {
    try {
      const validator = new Validator(schema as Schema, schemaDraft(schema as Record<string, unknown>), false);
      validator.validate(null); // resolves references; a dangling $ref throws here
      return {
        validate(value: unknown): string[] {
          const result = validator.validate(value);
          if (result.valid) return [];
          // cfworker reports a summary unit per failing keyword path; keep the leaf messages.
          const leaves = result.errors.filter((e) => !/^(Property|Items|Array items) /.test(e.error) || result.errors.length === 1);
          return (leaves.length > 0 ? leaves : result.errors).slice(0, MAX_ERRORS).map(describe);
        },
      };
    } catch (err) {
      problems.push(`output_schema: ${(err instanceof Error ? err.message : String(err)).split("\n")[0]?.trim()}`);
    }
  }
  throw new ApiError(400, "invalid_output_schema", "The output_schema is not a valid JSON Schema.", {
    details: problems.map((p) => {
      const [path, ...rest] = p.split(": ");
      return { path, message: rest.join(": ") };
    }),
  });
}
