/**
 * A pool's choice of deployment (durable-objects/coordinator/pools.ts): by weight among those that
 * can take the call, sticky per stage where asked, and every deployment when none can; a
 * deployment's key (src/llm/credential.ts) round-trips and never reads a model name as one.
 */
import { describe, expect, it } from "vitest";
import { pickDeployment } from "../../../durable-objects/coordinator/pools";
import { deploymentKey, keyLabel, splitDeploymentKey } from "../../../src/llm/credential";
import { seeded } from "../../../src/lib/seeded";

const counts = (weights: number[], usable: (d: number) => boolean, n = 20_000) => {
  const random = seeded(7);
  const seen = weights.map(() => 0);
  for (let i = 0; i < n; i++) seen[pickDeployment(weights, "s", false, usable, random)]!++;
  return seen.map((c) => c / n);
};

describe("a pool's choice of deployment", () => {
  it("spreads by weight among the deployments that can take the call", () => {
    const shares = counts([3, 1], () => true);
    expect(shares[0]).toBeCloseTo(0.75, 1);
    expect(shares[1]).toBeCloseTo(0.25, 1);
    expect(counts([3, 1, 4], (d) => d !== 2)).toEqual([expect.closeTo(0.75, 1), expect.closeTo(0.25, 1), 0]);
    // None can: the choice of all by weight (its circuit or pacer then holds the call).
    expect(counts([1, 1], () => false).every((s) => s > 0.4)).toBe(true);
  });

  it("sticks a stage to one deployment, leaving it only while it cannot take the call, for the next in order", () => {
    const weights = [1, 1, 1, 1];
    const first = pickDeployment(weights, "stage-a", true, () => true, Math.random);
    for (let i = 0; i < 50; i++) expect(pickDeployment(weights, "stage-a", true, () => true, Math.random)).toBe(first);
    expect(pickDeployment(weights, "stage-a", true, (d) => d !== first, Math.random)).toBe((first + 1) % 4);
    expect(pickDeployment(weights, "stage-a", true, () => false, Math.random)).toBe(first);
    // Different stages land on different deployments (by their names' hash, weighted).
    const stages = Array.from({ length: 40 }, (_, i) => pickDeployment(weights, `stage-${i}`, true, () => true, Math.random));
    expect(new Set(stages).size).toBe(4);
  });

  it("keys a deployment apart from its model, and never takes a model's own name for one", () => {
    expect(deploymentKey("openai/gpt-6-sol", 0)).toBe("openai/gpt-6-sol");
    expect(splitDeploymentKey(deploymentKey("openai/gpt-6-sol", 3))).toEqual({ model: "openai/gpt-6-sol", deployment: 3 });
    expect(splitDeploymentKey("openai/gpt#2")).toEqual({ model: "openai/gpt#2", deployment: 0 });
    expect(keyLabel(deploymentKey("openai/gpt-6-sol", 1))).toBe("openai/gpt-6-sol [deployment 2]");
  });
});
