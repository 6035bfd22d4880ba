import { describe, expect, it } from "vitest";
import { extractJson, stripCodeFence } from "../../src/output/extract-json";
import { compileOutputSchema } from "../../src/output/validate";
import { InputError } from "../../src/lib/errors";

describe("extractJson", () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['```json\n{"a":1}\n```', { a: 1 }],
    ["```\n[1, 2]\n```", [1, 2]],
    ['Here you go:\n```json\n{"a": "x"}\n```\nAnything else?', { a: "x" }],
    ['Sure! {"a": {"b": "}"}} hope that helps', { a: { b: "}" } }],
    ["The list: [1, 2, 3].", [1, 2, 3]],
    ['{bad} then {"ok": true}', { ok: true }],
    ["42", 42],
  ])("parses %j", (text, value) => {
    expect(extractJson(text)).toEqual({ ok: true, value });
  });

  it("fails on text without JSON", () => {
    const result = extractJson("I cannot do that.");
    expect(result.ok).toBe(false);
  });

  it("strips only a fence", () => {
    expect(stripCodeFence("  plain  ")).toBe("plain");
  });
});

describe("output schemas", () => {
  const schema = {
    type: "object",
    properties: { score: { type: "integer", minimum: 1, maximum: 5 }, label: { type: "string" } },
    required: ["score", "label"],
  };

  it("collects every error, not only the first", () => {
    const problems = compileOutputSchema(schema).validate({ score: 9 });
    expect(problems).toHaveLength(2);
    expect(problems.join(" ")).toMatch(/label/);
    expect(problems.join(" ")).toMatch(/9 is greater than 5/);
  });

  it("accepts valid output and draft-07 schemas", () => {
    expect(compileOutputSchema(schema).validate({ score: 3, label: "ok" })).toEqual([]);
    const draft7 = { $schema: "http://json-schema.org/draft-07/schema#", type: "array", items: { type: "string" } };
    expect(compileOutputSchema(draft7).validate(["a", 1])).toHaveLength(1);
  });

  it.each([
    [{ type: "objekt" }, "output_schema.type"],
    [{ type: "object", properties: { a: { type: 3 } } }, "output_schema.properties.a.type"],
    [{ required: "a" }, "output_schema.required"],
    [{ anyOf: [] }, "output_schema.anyOf"],
    [{ pattern: "(" }, "output_schema.pattern"],
    [{ $ref: "#/$defs/x" }, "output_schema"],
  ])("rejects %j at submission", (bad, path) => {
    try {
      compileOutputSchema(bad);
      expect.unreachable();
    } catch (err) {
      expect((err as InputError).code).toBe("invalid_output_schema");
      expect((err as InputError).details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    }
  });
});
