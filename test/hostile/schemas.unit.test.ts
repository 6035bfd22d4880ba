/**
 * Hostile output schemas: catastrophic regexes validate in linear time, and a schema that would
 * fail every item is refused at submission (400 invalid_output_schema, with the path).
 */
import { describe, expect, test } from "vitest";
import { InputError } from "../../src/lib/errors";
import { compileOutputSchema } from "../../src/output/validate";
import { timed } from "./timed";

const WORST_CASE_MS = 50;

function refusal(schema: unknown): { status: number; code: string; details: { path: string; message: string }[] } {
  try {
    compileOutputSchema(schema);
  } catch (err) {
    if (err instanceof InputError) return { status: 400, code: err.code, details: err.details as never }; // the edge answers 400
    throw err;
  }
  throw new Error("the schema was accepted");
}

describe("catastrophic patterns validate in linear time", () => {
  test.each([
    ["^(a+)+$", "a".repeat(31) + "!"],
    ["^(a|a)*$", "a".repeat(40) + "!"],
    ["^(\\w+\\s?)*$", "an ordinary sentence that ends badly".repeat(3) + "!"],
  ])("pattern %s", (pattern, input) => {
    const validator = compileOutputSchema({ type: "string", pattern });
    validator.validate("warm up"); // the first match compiles the pattern
    const { value, ms } = timed(() => validator.validate(input));
    expect(value).toEqual(["the output: String does not match pattern."]);
    expect(ms).toBeLessThan(WORST_CASE_MS);
    expect(validator.validate("aaaa")).toEqual([]);
  });

  test("a 100,000-character output takes time linear in its length", () => {
    const validator = compileOutputSchema({ type: "string", pattern: "^(a+)+$" });
    validator.validate("warm up");
    const { value, ms } = timed(() => validator.validate("a".repeat(100_000) + "!"));
    expect(value.length).toBe(1);
    expect(ms).toBeLessThan(WORST_CASE_MS * 10); // backtracking would need 2^100000 steps
  });

  test("patternProperties keys are matched in linear time too", () => {
    const validator = compileOutputSchema({ type: "object", patternProperties: { "^(a+)+$": { type: "number" } }, additionalProperties: false });
    const { value, ms } = timed(() => validator.validate({ ["a".repeat(31) + "!"]: 1 }));
    expect(value.length).toBeGreaterThan(0);
    expect(ms).toBeLessThan(WORST_CASE_MS);
    expect(validator.validate({ aaa: 1 })).toEqual([]);
    expect(validator.validate({ aaa: "x" }).join()).toMatch(/number/);
  });

  test("outside validation, RegExp is V8's own again", () => {
    compileOutputSchema({ type: "string", pattern: "^x$" }).validate("x");
    expect(/(?=a)a/.test("a")).toBe(true);
    expect(new RegExp("(a)\\1").test("aa")).toBe(true);
  });
});

describe("schemas that would fail every item are refused at submission", () => {
  test.each([
    [
      "a nested remote $ref",
      { type: "object", properties: { a: { $ref: "https://example.com/schema.json" } } },
      "output_schema.properties.a",
      /only local references/,
    ],
    ["a relative $ref", { items: { $ref: "other.json#/x" } }, "output_schema.items", /only local/],
    ["a dangling local $ref", { properties: { a: { $ref: "#/$defs/missing" } } }, "output_schema.properties.a", /points to nothing/],
    [
      "an invalid regex in patternProperties",
      { patternProperties: { "([a-z": {} } },
      "output_schema.patternProperties.([a-z",
      /not a valid regular expression/,
    ],
    ["a lookahead pattern", { type: "string", pattern: "^(?=.*\\d).+$" }, "output_schema.pattern", /linear time/],
    ["a backreference", { properties: { x: { pattern: "(a)\\1" } } }, "output_schema.properties.x.pattern", /linear time/],
    ["a draft 2020-12 tuple items", { type: "array", items: [{ type: "string" }] }, "output_schema.items", /prefixItems/],
    [
      "a bad subschema deep in anyOf",
      { anyOf: [{ type: "string" }, { properties: { a: { type: "strnig" } } }] },
      "output_schema.anyOf[1].properties.a.type",
      /unknown type/,
    ],
    ["a bad subschema in dependentSchemas", { dependentSchemas: { a: 5 } }, "output_schema.dependentSchemas.a", /object or a boolean/],
    ["a non-array enum", { enum: "x" }, "output_schema.enum", /array/],
    ["a nested $id", { properties: { a: { $id: "a.json" } } }, "output_schema.properties.a.$id", /nested \$id/],
  ])("%s", (_name, schema, path, message) => {
    const res = refusal(schema);
    expect(res.status).toBe(400);
    expect(res.code).toBe("invalid_output_schema");
    const detail = res.details.find((d) => d.path === path);
    expect(detail, JSON.stringify(res.details)).toBeDefined();
    expect(detail?.message).toMatch(message);
  });

  test("draft-07 tuples, local refs and anchors are accepted and work", () => {
    const tuple = compileOutputSchema({ $schema: "http://json-schema.org/draft-07/schema#", type: "array", items: [{ type: "string" }, { type: "number" }] });
    expect(tuple.validate(["a", 1])).toEqual([]);
    expect(tuple.validate([1, "a"]).length).toBeGreaterThan(0);
    const refs = compileOutputSchema({
      $defs: { n: { type: "number" }, s: { $anchor: "str", type: "string" } },
      properties: { a: { $ref: "#/$defs/n" }, b: { $ref: "#str" } },
    });
    expect(refs.validate({ a: 1, b: "x" })).toEqual([]);
    expect(refs.validate({ a: "x" }).length).toBeGreaterThan(0);
  });
});
