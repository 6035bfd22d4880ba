import { describe, expect, it } from "vitest";
import { allowances } from "../../src/engine/allocation";

const budget = { total: 1000, onExhausted: "pause" as const, allocation: { map: 0.6, shuffle: 0.05, reduce: 0.25, synthesis: 0.1 } };
const stages = (status: Record<string, string>) =>
  ["map", "shuffle", "reduce", "synthesis"].map((name) => ({ name, status: (status[name] ?? "pending") as never }));

describe("per-stage budget allocation", () => {
  it("starts from each stage's share of the total", () => {
    expect(allowances(budget.total, budget.allocation, stages({ map: "running" }), {})).toEqual({ map: 600, shuffle: 50, reduce: 250, synthesis: 100 });
  });

  it("passes an ended stage's unspent share on to the stages after it, in proportion to their shares", () => {
    const a = allowances(budget.total, budget.allocation, stages({ map: "completed", shuffle: "completed", reduce: "running" }), { map: 400 });
    expect(a.map).toBe(400);
    expect(a.shuffle).toBe(0); // no model call: its whole share (and what map passed it) moves on
    expect(a.reduce).toBeCloseTo(250 + 125 + (50 + 25) * (0.25 / 0.35), 6);
    expect(a.synthesis).toBeCloseTo(100 + 50 + (50 + 25) * (0.1 / 0.35), 6);
    expect(a.map + a.shuffle + (a.reduce ?? 0) + (a.synthesis ?? 0)).toBeCloseTo(1000 - 200 + 200, 6);
  });

  it("gives a skipped stage's share to the others in proportion", () => {
    const a = allowances(budget.total, budget.allocation, stages({ synthesis: "skipped", map: "running" }), {});
    expect(a.map).toBeCloseTo(600 / 0.9, 6);
    expect(a.reduce).toBeCloseTo(250 / 0.9, 6);
    expect(a.synthesis).toBeUndefined();
  });
});
