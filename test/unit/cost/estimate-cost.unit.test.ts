import { describe, expect, it } from "vitest";
import { summarize } from "../../../src/engine/estimate-cost";
import type { TaskEstimate } from "../../../src/engine/estimate-job";

const task = (over: Partial<TaskEstimate>): TaskEstimate => ({
  stage: "items",
  model: "openai/gpt-6-luna",
  calls: 1,
  input_tokens: 2_000,
  output_tokens: 100,
  output_tokens_max: 400,
  sharedPrefix: null,
  exact: null,
  ...over,
});
const PRICE = { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15, batch: 0.5 };
const price = (model: string) => (model === "anthropic/claude-sonnet-4-6" ? PRICE : null);

describe("an estimate's prompt cache and dollars", () => {
  it("writes each stage's shared prefix on its first call and reads it on the others, and prices them realtime and batch", () => {
    const shared = { tokens: 1_500, writes: true };
    const tasks = [0, 1, 2].map(() => task({ model: "anthropic/claude-sonnet-4-6", sharedPrefix: shared }));
    const e = summarize({ tasks, stages: ["items"], notes: ["chars/4"] }, new Set(), price);
    expect(e).toMatchObject({ calls: 3, input_tokens: 6_000, output_tokens: 300, cached_input_tokens: 3_000, cache_write_input_tokens: 1_500 });
    // plain 6,000 − 3,000 − 1,500 = 1,500 × $3; 3,000 × $0.3; 1,500 × $3.75; 300 × $15 (per million)
    const realtime = (1_500 * 3 + 3_000 * 0.3 + 1_500 * 3.75 + 300 * 15) / 1e6;
    expect(e.cost_usd).toBeCloseTo(realtime, 8);
    expect(e.cost_usd_by_mode.batch).toBeCloseTo(realtime / 2, 8);
    // The bound: the same with each call's output at max_tokens (400): 900 more output tokens at $15.
    expect(e).toMatchObject({ output_tokens_max: 1_200, total_tokens: 6_000 + 1_200 });
    expect(e.cost_usd_max).toBeCloseTo(realtime + (900 * 15) / 1e6, 8);
    expect(e.cost_usd_max_by_mode.batch).toBeCloseTo((realtime + (900 * 15) / 1e6) / 2, 8);
    expect(e.by_stage.items).toMatchObject({ cached_input_tokens: 3_000, cache_write_input_tokens: 1_500 });
    expect(e.method).toMatch(/prompt cache is assumed/);
  });

  it("is null in dollars when any model has no price, and counts no tokens for calls the response cache answers", () => {
    const tasks = [task({ model: "anthropic/claude-sonnet-4-6" }), task({ stage: "other", model: "openai/unknown" })];
    const e = summarize({ tasks, stages: ["items", "other"], notes: [] }, new Set([1]), price);
    expect(e.cost_usd).not.toBeNull(); // the unpriced call is answered by the response cache: it costs nothing
    const all = summarize({ tasks, stages: ["items", "other"], notes: [] }, new Set(), price);
    expect(all.cost_usd).toBeNull();
    expect(all.cost_usd_by_mode).toEqual({ realtime: null, batch: null });
    expect(all.by_stage.items?.cost_usd).not.toBeNull();
  });
});
