/** The expected output of a call, sized from its output schema, never above its bound. */
import { describe, expect, it } from "vitest";
import { expectedOutputTokens } from "../../src/engine/output-size";

describe("expected output tokens", () => {
  it("sizes an object from its keys and values", () => {
    // 2 + ("echo": 1 + 2 + 12) + ("length": 2 + 2 + 2)
    expect(expectedOutputTokens({ type: "object", properties: { echo: { type: "string" }, length: { type: "integer" } } }, 1_024)).toBe(23);
    expect(expectedOutputTokens({ type: "object", properties: { keep: { type: "boolean" }, confidence: { type: "number" } } }, null)).toBe(
      2 + (1 + 2 + 1) + (3 + 2 + 2),
    );
  });

  it("counts an enum at its longest value, a list at three elements within its bounds, a choice at its largest option", () => {
    expect(expectedOutputTokens({ enum: ["complaint", "praise", "a much longer label than the others"] }, 100)).toBe(
      Math.ceil('"a much longer label than the others"'.length / 4),
    );
    expect(expectedOutputTokens({ type: "array", items: { type: "integer" } }, 100)).toBe(2 + 3 * 3);
    expect(expectedOutputTokens({ type: "array", items: { type: "integer" }, minItems: 10 }, 100)).toBe(2 + 10 * 3);
    expect(expectedOutputTokens({ type: "array", items: { type: "integer" }, maxItems: 1 }, 100)).toBe(2 + 3);
    expect(expectedOutputTokens({ anyOf: [{ type: "integer" }, { type: "string" }] }, 100)).toBe(12);
    expect(expectedOutputTokens({ type: "string", maxLength: 8 }, 100)).toBe(3);
  });

  it("never passes the call's bound, and expects a quarter of it without a schema", () => {
    expect(expectedOutputTokens({ type: "array", items: { type: "string" }, minItems: 500 }, 50)).toBe(50);
    expect(expectedOutputTokens(null, 1_000)).toBe(250);
    expect(expectedOutputTokens(null, null)).toBe(256); // 1,024 when unset
  });

  it("bounds its walk: a deep or wide schema costs a bounded number of nodes", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 1_000; i++) deep = { type: "array", items: deep, maxItems: 1 };
    expect(expectedOutputTokens(deep, 1_000_000)).toBeGreaterThan(0);
    const wide = {
      type: "object",
      properties: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, { type: "object", properties: { a: { type: "string" } } }])),
    };
    expect(expectedOutputTokens(wide, 10_000_000)).toBeLessThan(200 * 30);
  });
});
