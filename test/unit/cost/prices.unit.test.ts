import { describe, expect, it } from "vitest";
import { costOf, parsePrices, priceOf, priced } from "../../../src/llm/prices";

const NO_ENV = {};

describe("the price table", () => {
  it("prices the shipped models, and their dated snapshots, at the providers' list prices", () => {
    expect(priceOf(NO_ENV, "openai/gpt-4o-mini")).toEqual({ input: 0.15, cached_input: 0.075, cache_write: 0.15, output: 0.6, batch: 0.5 });
    expect(priceOf(NO_ENV, "openai/gpt-4o-mini-2024-07-18")).toEqual(priceOf(NO_ENV, "openai/gpt-4o-mini"));
    const sonnet = priceOf(NO_ENV, "anthropic/claude-sonnet-4-5-20250929");
    expect(sonnet).toMatchObject({ input: 3, output: 15, batch: 0.5 });
    expect(sonnet?.cached_input).toBeCloseTo(0.3, 12);
    expect(sonnet?.cache_write).toBeCloseTo(3.75, 12);
    // GPT-5.6 and later bill a cache write at 1.25× input (their model pages).
    expect(priceOf(NO_ENV, "openai/gpt-6-luna")).toEqual({ input: 0.1, cached_input: 0.01, cache_write: 0.125, output: 0.5, batch: 0.5 });
  });

  it("has no price, never a guess, for a model it does not list: a newer version is not its older one", () => {
    expect(priceOf(NO_ENV, "anthropic/claude-opus-4-7")).toBeNull(); // not claude-opus-4's $15
    expect(priceOf(NO_ENV, "openai/gpt-4o-mini-tts")).toBeNull();
    expect(priceOf(NO_ENV, "openai-compatible/llama-3")).toBeNull();
    expect(priced(NO_ENV, "openai/m", { input_tokens: 10, output_tokens: 5 }).cost_usd).toBeNull();
    expect(priced(NO_ENV, "openai/m", { input_tokens: 0, output_tokens: 0 }).cost_usd).toBe(0); // nothing spent costs nothing
  });

  it("takes the deployment's PRICES over the shipped ones, a missing cached or write price at the input price", () => {
    const env = {
      PRICES: JSON.stringify({
        "openai/gpt-4o-mini": { input: 1, output: 2 },
        "openai-compatible/llama-3": { input: 0.2, output: 0.2, cached_input: 0.1, batch: 1 },
      }),
    };
    expect(priceOf(env, "openai/gpt-4o-mini")).toEqual({ input: 1, cached_input: 1, cache_write: 1, output: 2, batch: 0.5 });
    expect(priceOf(env, "openai-compatible/llama-3")).toEqual({ input: 0.2, cached_input: 0.1, cache_write: 0.2, output: 0.2, batch: 1 });
    expect(priceOf(env, "openai/gpt-4o")).toMatchObject({ input: 2.5 }); // the others stay shipped
  });

  it("names what is wrong with a PRICES it cannot use", () => {
    expect(() => parsePrices("{")).toThrow(/PRICES must be JSON/);
    expect(() => parsePrices("[]")).toThrow(/object keyed by model/);
    expect(() => parsePrices(JSON.stringify({ m: { input: 1 } }))).toThrow(/"m"\.output must be a number/);
    expect(() => parsePrices(JSON.stringify({ m: { input: -1, output: 1 } }))).toThrow(/"m"\.input/);
    expect(() => parsePrices(JSON.stringify({ m: { input: 1, output: 1, batch: 2 } }))).toThrow(/batch must be a multiplier/);
  });
});

describe("a call's dollars", () => {
  const price = { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15, batch: 0.5 };

  it("bills cached and cache-written input tokens (parts of input_tokens) at their own prices", () => {
    const usage = { input_tokens: 1_000_000, output_tokens: 100_000, cache_read_tokens: 600_000, cache_write_tokens: 200_000 };
    // 200k plain × $3 + 600k read × $0.3 + 200k written × $3.75 + 100k out × $15, per million
    expect(costOf(price, usage)).toBeCloseTo(0.6 + 0.18 + 0.75 + 1.5, 10);
    expect(costOf(price, usage, "batch")).toBeCloseTo((0.6 + 0.18 + 0.75 + 1.5) / 2, 10);
  });
});
