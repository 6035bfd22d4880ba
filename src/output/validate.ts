/**
 * Output schemas: checked once at submission (400 `invalid_output_schema`, see ./schema-check),
 * then used to validate every item's output with @cfworker/json-schema (an interpreter; ajv
 * compiles validators with `new Function`, which workerd forbids), its regexes matched in linear
 * time (./linear-regexp). All errors are collected, not only the first.
 */
import { Validator, type OutputUnit, type Schema } from "@cfworker/json-schema";
import { InputError } from "../lib/errors";
import { withLinearRegExp } from "./linear-regexp";
import { schemaProblems, type SchemaDraft } from "./schema-check";

export interface OutputValidator {
  validate(value: unknown): string[];
}

const DRAFT_07_URIS = ["http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema"];
const MAX_ERRORS = 20;

export function schemaDraft(schema: Record<string, unknown>): SchemaDraft {
  return typeof schema.$schema === "string" && DRAFT_07_URIS.includes(schema.$schema) ? "7" : "2020-12";
}

/** Whether a schema builds regexes while it validates (`pattern`, `patternProperties`): only then is RegExp swapped. */
function usesPatterns(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(usesPatterns);
  if (typeof schema !== "object" || schema === null) return false;
  return Object.entries(schema).some(([key, value]) => key === "pattern" || key === "patternProperties" || usesPatterns(value));
}

function describe(unit: OutputUnit): string {
  const where = unit.instanceLocation === "#" ? "the output" : unit.instanceLocation.replace(/^#/, "");
  return `${where}: ${unit.error}`;
}

export function compileOutputSchema(schema: unknown): OutputValidator {
  const draft = typeof schema === "object" && schema !== null ? schemaDraft(schema as Record<string, unknown>) : "2020-12";
  const problems = schemaProblems(schema, draft);
  if (problems.length === 0) {
    try {
      const validator = new Validator(schema as Schema, draft, false);
      // Swapping the global RegExp costs every call (V8 drops code that relied on it): only for schemas with regexes.
      const run = usesPatterns(schema) ? <T>(fn: () => T) => withLinearRegExp(fn) : <T>(fn: () => T) => fn();
      run(() => validator.validate(null)); // resolves references; a dangling $ref throws here
      return {
        validate(value: unknown): string[] {
          const result = run(() => validator.validate(value));
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
  throw new InputError(
    "invalid_output_schema",
    "The output_schema is not a valid JSON Schema.",
    problems.map((p) => {
      const [path, ...rest] = p.split(": ");
      return { path: path ?? "output_schema", message: rest.join(": ") };
    }),
  );
}
