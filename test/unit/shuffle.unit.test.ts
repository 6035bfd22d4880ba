import { describe, expect, it } from "vitest";
import { cpuMs } from "../hostile/timed";
import { shuffle, type MapperOutput, type ShuffleOptions } from "../../src/operators/map-reduce/shuffle";

const options = (over: Partial<ShuffleOptions> = {}): ShuffleOptions => ({ key: "category", dedupe: "exact", dedupeFields: null, conflict: "first", ...over });

describe("shuffle", () => {
  it("tags sources, groups by key in code-point order, and orders by (first source, position)", () => {
    const outputs: MapperOutput[] = [
      {
        documents: [2, 3],
        extractions: [
          { category: "b", v: 1 },
          { category: "a", v: 2 },
        ],
      },
      { documents: [0, 1], extractions: [{ category: "b", v: 3 }, { v: 4 }, { category: "B", v: 5 }, { category: 7, v: 6 }] },
    ];
    const { groups, extractions, merged } = shuffle(outputs, options());
    expect(extractions).toBe(6);
    expect(merged).toBe(0);
    expect(groups.map((g) => g.key)).toEqual(["B", "a", "b", "default"]);
    expect(groups.find((g) => g.key === "b")?.extractions).toEqual([
      { category: "b", v: 3, sources: [0, 1] },
      { category: "b", v: 1, sources: [2, 3] },
    ]);
    expect(groups.find((g) => g.key === "default")?.extractions.map((e) => e.v)).toEqual([4, 6]);
  });

  it("groups by a dotted path", () => {
    const { groups } = shuffle([{ documents: [0], extractions: [{ meta: { kind: "x" } }, { meta: {} }] }], options({ key: "meta.kind" }));
    expect(groups.map((g) => [g.key, g.extractions.length])).toEqual([
      ["default", 1],
      ["x", 1],
    ]);
  });

  it("merges exact duplicates into one extraction with the union of sources", () => {
    const outputs: MapperOutput[] = [
      { documents: [4], extractions: [{ category: "a", name: "x" }] },
      { documents: [1], extractions: [{ name: "x", category: "a" }] },
    ];
    const { groups, merged } = shuffle(outputs, options());
    expect(merged).toBe(1);
    expect(groups[0]?.extractions).toEqual([{ name: "x", category: "a", sources: [1, 4] }]);
    expect(shuffle(outputs, options({ dedupe: "none" })).groups[0]?.extractions).toHaveLength(2);
  });

  it("dedupes on dedupe_fields after trimming and case-folding, and resolves conflicts by each rule", () => {
    const outputs: MapperOutput[] = [
      { documents: [0], extractions: [{ category: "c", name: " Acme ", confidence: 0.2, note: "first" }] },
      { documents: [1], extractions: [{ category: "c", name: "acme", confidence: 0.9, note: "confident" }] },
      { documents: [2], extractions: [{ category: "c", name: "ACME", confidence: 0.5, note: "twice" }] },
      { documents: [3], extractions: [{ category: "c", name: "ACME", confidence: 0.5, note: "twice" }] },
    ];
    const pick = (conflict: ShuffleOptions["conflict"]) => shuffle(outputs, options({ dedupeFields: ["name"], conflict })).groups[0]?.extractions;
    expect(pick("first")).toEqual([{ category: "c", name: " Acme ", confidence: 0.2, note: "first", sources: [0, 1, 2, 3] }]);
    expect(pick("highest_confidence")?.[0]?.note).toBe("confident");
    expect(pick("most_frequent")?.[0]?.note).toBe("twice");
    const tie: MapperOutput[] = [outputs[1] as MapperOutput, outputs[0] as MapperOutput];
    expect(shuffle(tie, options({ dedupeFields: ["name"], conflict: "most_frequent" })).groups[0]?.extractions[0]?.note).toBe("first"); // ties → lowest source
  });

  it("is deterministic: the order mappers finished in changes nothing", () => {
    const outputs: MapperOutput[] = Array.from({ length: 20 }, (_, b) => ({
      documents: [b * 2, b * 2 + 1],
      extractions: Array.from({ length: 5 }, (_, i) => ({ category: `k${(b * 7 + i) % 6}`, n: (b + i) % 4, confidence: (b % 3) / 3 })),
    }));
    const reversed = [...outputs].reverse();
    const shuffled = [...outputs].sort((a, b) => (((a.documents[0] ?? 0) * 7919) % 13) - (((b.documents[0] ?? 0) * 7919) % 13));
    for (const conflict of ["first", "most_frequent", "highest_confidence"] as const) {
      const o = options({ dedupeFields: ["n"], conflict });
      const expected = JSON.stringify(shuffle(outputs, o));
      expect(JSON.stringify(shuffle(reversed, o))).toBe(expected);
      expect(JSON.stringify(shuffle(shuffled, o))).toBe(expected);
    }
  });

  it("shuffles 100,000 extractions in well under a second", () => {
    const outputs: MapperOutput[] = Array.from({ length: 10_000 }, (_, b) => ({
      documents: [b],
      extractions: Array.from({ length: 10 }, (_, i) => ({ category: `c${(b + i) % 20}`, name: `n${(b * 10 + i) % 30_000}`, confidence: i / 10 })),
    }));
    const started = cpuMs(); // CPU time: a second suite beside this one does not stretch it
    const { groups, extractions, merged } = shuffle(outputs, options({ dedupeFields: ["name"], conflict: "highest_confidence" }));
    const ms = cpuMs() - started;
    expect(extractions).toBe(100_000);
    expect(groups).toHaveLength(20);
    expect(merged).toBeGreaterThan(0);
    expect(ms).toBeLessThan(3_000);
  });
});
