/**
 * Binomial confidence bounds against published values: Clopper–Pearson (exact) intervals, their
 * one-sided closed forms at the extremes, Wilson score intervals, the normal quantile, and the
 * incomplete beta function's identities.
 */
import { describe, expect, it } from "vitest";
import { seeded } from "./seeded";
import {
  betaQuantile,
  clopperPearsonInterval,
  clopperPearsonLower,
  clopperPearsonUpper,
  incompleteBeta,
  logGamma,
  normalQuantile,
  wilsonAround,
  wilsonInterval,
} from "../../src/engine/stats";

describe("the building blocks", () => {
  it("ln Γ and the incomplete beta function", () => {
    expect(logGamma(1)).toBeCloseTo(0, 12);
    expect(logGamma(5)).toBeCloseTo(Math.log(24), 12);
    expect(logGamma(0.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI)), 12);
    expect(incompleteBeta(0.3, 1, 1)).toBeCloseTo(0.3, 12); // Beta(1, 1) is uniform
    expect(incompleteBeta(0.3, 2, 1)).toBeCloseTo(0.09, 12); // x^a when b = 1
    expect(incompleteBeta(0.4, 3, 5) + incompleteBeta(0.6, 5, 3)).toBeCloseTo(1, 12); // I_x(a, b) = 1 − I_{1−x}(b, a)
    expect(betaQuantile(0.5, 4, 4)).toBeCloseTo(0.5, 10);
  });

  it("the normal quantile", () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963985, 8);
    expect(normalQuantile(0.95)).toBeCloseTo(1.644853627, 8);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 12);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232306, 8);
  });
});

describe("Clopper–Pearson", () => {
  it.each([
    // k, n, two-sided 95 % interval (published tables)
    [0, 10, 0, 0.3085],
    [5, 10, 0.1871, 0.8129],
    [8, 10, 0.4439, 0.9748],
    [10, 10, 0.6915, 1],
    [50, 100, 0.3983, 0.6017],
    [95, 100, 0.8872, 0.9836],
  ])("%i of %i: 95 %% interval [%f, %f]", (k, n, lo, hi) => {
    const [lower, upper] = clopperPearsonInterval(k, n, 0.95);
    expect(lower).toBeCloseTo(lo, 4);
    expect(upper).toBeCloseTo(hi, 4);
  });

  it("one-sided bounds have their closed forms at the extremes, and grow with the evidence", () => {
    expect(clopperPearsonLower(10, 10, 0.95)).toBeCloseTo(0.05 ** (1 / 10), 10); // all succeeded: α^(1/n)
    expect(clopperPearsonUpper(0, 10, 0.95)).toBeCloseTo(1 - 0.05 ** (1 / 10), 10); // none: 1 − α^(1/n)
    expect(clopperPearsonLower(0, 10, 0.95)).toBe(0);
    expect(clopperPearsonUpper(10, 10, 0.95)).toBe(1);
    expect(clopperPearsonLower(90, 100, 0.95)).toBeGreaterThan(clopperPearsonLower(9, 10, 0.95)); // more trials, a tighter bound
    expect(clopperPearsonLower(90, 100, 0.99)).toBeLessThan(clopperPearsonLower(90, 100, 0.95)); // more confidence, a looser one
  });

  it("covers the true rate at least as often as it says (simulated: 1,000 samples each of three rates)", () => {
    const random = seeded(42);
    for (const [p, n] of [
      [0.9, 50],
      [0.6, 30],
      [0.97, 200],
    ] as const) {
      let covered = 0;
      for (let s = 0; s < 1_000; s++) {
        let k = 0;
        for (let i = 0; i < n; i++) if (random() < p) k++;
        if (clopperPearsonLower(k, n, 0.95) <= p) covered++;
      }
      expect(covered / 1_000, `p ${p}, n ${n}`).toBeGreaterThanOrEqual(0.94); // ≥ 0.95 in expectation; 1,000 samples' noise
    }
  });

  it("refuses counts that are not counts", () => {
    expect(() => clopperPearsonLower(11, 10, 0.95)).toThrow(RangeError);
    expect(() => clopperPearsonLower(-1, 10, 0.95)).toThrow(RangeError);
    expect(() => clopperPearsonLower(1.5, 10, 0.95)).toThrow(RangeError);
    expect(() => clopperPearsonLower(5, 10, 1)).toThrow(RangeError);
  });
});

describe("Wilson", () => {
  it.each([
    [5, 10, 0.2366, 0.7634],
    [8, 10, 0.4902, 0.9433],
    [0, 10, 0, 0.2775],
    [50, 100, 0.4038, 0.5962],
  ])("%i of %i: 95 %% interval [%f, %f]", (k, n, lo, hi) => {
    const [lower, upper] = wilsonInterval(k, n, 0.95);
    expect(lower).toBeCloseTo(lo, 4);
    expect(upper).toBeCloseTo(hi, 4);
  });

  it("is narrower than Clopper–Pearson, which never under-covers", () => {
    const [wl, wu] = wilsonInterval(30, 40, 0.95);
    const [cl, cu] = clopperPearsonInterval(30, 40, 0.95);
    expect(wu - wl).toBeLessThan(cu - cl);
    expect(wilsonInterval(0, 0, 0.95)).toEqual([0, 1]);
  });

  it("takes a share of halves (a tie counted half a win): 2.5 of 4 lies between 2 of 4 and 3 of 4, and a bad share is refused", () => {
    const [lo, hi] = wilsonAround(2.5 / 4, 4, 0.95);
    expect(lo).toBeGreaterThan(wilsonInterval(2, 4, 0.95)[0]);
    expect(lo).toBeLessThan(wilsonInterval(3, 4, 0.95)[0]);
    expect(hi).toBeGreaterThan(wilsonInterval(2, 4, 0.95)[1]);
    expect(wilsonAround(0.5, 100, 0.95)).toEqual(wilsonInterval(50, 100, 0.95));
    expect(() => wilsonAround(1.5, 4, 0.95)).toThrow(RangeError);
    expect(() => wilsonAround(0.5, 0, 0.95)).toThrow(RangeError);
  });
});
