import { describe, expect, it } from "vitest";
import { isReference, jsonTypeName, parseRef, resolveRef } from "../../src/operators/pipeline/refs";

describe("pipeline references", () => {
  it("parses names, dotted fields and list positions", () => {
    expect(parseRef("${raw_data}")).toEqual({ ok: true, ref: { name: "raw_data", path: [] } });
    expect(parseRef("${list_files.files}")).toEqual({ ok: true, ref: { name: "list_files", path: ["files"] } });
    expect(parseRef("${a.b[0].c[12]}")).toEqual({ ok: true, ref: { name: "a", path: ["b", 0, "c", 12] } });
  });

  it.each([
    ["raw", /looks like/],
    ["${}", /looks like/],
    ["${1abc}", /does not start with a name/],
    ["${a..b}", /after "\."/],
    ["${a.b[01]}", /use \.field or \[n\]/],
    ["${a[-1]}", /use \.field or \[n\]/],
    ["${a b}", /unexpected/],
    [`\${a${".x".repeat(65)}}`, /at most 64/],
    [`\${${"a".repeat(1001)}}`, /at most 1000/],
  ])("refuses %s", (text, message) => {
    const parsed = parseRef(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });

  it("resolves into the store, telling a missing path from a null value", () => {
    const store = { load: { files: ["a.txt", { name: "b" }], empty: null }, raw: "text" };
    const at = (text: string) => {
      const parsed = parseRef(text);
      if (!parsed.ok) throw new Error(parsed.message);
      return resolveRef(store, parsed.ref);
    };
    expect(at("${load.files[1].name}")).toEqual({ found: true, value: "b" });
    expect(at("${load.empty}")).toEqual({ found: true, value: null });
    expect(at("${load.files[2]}")).toEqual({ found: false, at: "load.files[2]" });
    expect(at("${load.nope.x}")).toEqual({ found: false, at: "load.nope" });
    expect(at("${raw.length}")).toEqual({ found: false, at: "raw.length" }); // no properties of strings
    expect(at("${later}")).toEqual({ found: false, at: "later" });
    expect(at("${toString}")).toEqual({ found: false, at: "toString" }); // only the store's own names
  });

  it("names JSON types as the contract's messages do, and recognises whole references", () => {
    expect([[], {}, "s", 1, true, null].map(jsonTypeName)).toEqual(["array", "object", "string", "number", "boolean", "null"]);
    expect(isReference("${x}")).toBe(true);
    expect(isReference("x ${y}")).toBe(false);
  });
});
