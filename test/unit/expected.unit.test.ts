/** What a running job is expected to spend (src/jobs/expected.ts): each stage's tasks left at the mean of its finished ones. */
import { describe, expect, it } from "vitest";
import { expectedOf } from "../../src/jobs/expected";

const stage = (total: number, completed: number, input: number, output: number, cost: number | null, status = "running") => ({
  status,
  total,
  completed,
  usage: { input_tokens: input, output_tokens: output },
  cost_usd: cost,
});

describe("a running job's expected spend", () => {
  it("adds to each stage's spend its tasks left at the mean of its finished tasks", () => {
    expect(expectedOf([stage(10, 4, 400, 80, 0.004), stage(2, 2, 50, 10, 0.001, "completed")])).toEqual({
      input_tokens: 1050,
      output_tokens: 210,
      cost_usd: 0.011,
    });
  });

  it("is not known while a stage with tasks left has finished none, and ignores a skipped stage", () => {
    expect(expectedOf([stage(10, 4, 400, 80, 0.004), stage(5, 0, 0, 0, 0, "pending")])).toBeNull();
    expect(expectedOf([stage(10, 10, 400, 80, 0.004, "completed"), stage(5, 0, 0, 0, 0, "skipped")])).toEqual({
      input_tokens: 400,
      output_tokens: 80,
      cost_usd: 0.004,
    });
  });

  it("has no dollars when a stage's calls had no price", () => {
    expect(expectedOf([stage(4, 2, 100, 10, null)])?.cost_usd).toBeNull();
  });
});
