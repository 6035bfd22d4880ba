import { describe, expect, it } from "vitest";
import { fromHeaders, rateObservation } from "../../src/llm/rate-headers";

const read = (h: Record<string, string>) => rateObservation(fromHeaders(new Headers(h)));

describe("a provider's rate-limit headers", () => {
  it("OpenAI: requests and tokens, limit and remaining", () => {
    const seen = read({
      "x-ratelimit-limit-requests": "5000",
      "x-ratelimit-remaining-requests": "4999",
      "x-ratelimit-reset-requests": "12ms",
      "x-ratelimit-limit-tokens": "4000000",
      "x-ratelimit-remaining-tokens": "3999000",
    });
    expect(seen).toMatchObject({ requests: { limit: 5_000, remaining: 4_999 }, tokens: { limit: 4_000_000, remaining: 3_999_000 } });
    expect(seen?.at).toBeTypeOf("number");
  });

  it("Anthropic: requests, tokens, input and output tokens", () => {
    const seen = read({
      "anthropic-ratelimit-requests-limit": "50",
      "anthropic-ratelimit-requests-remaining": "49",
      "anthropic-ratelimit-requests-reset": "2026-11-26T03:00:00Z",
      "anthropic-ratelimit-tokens-limit": "8000",
      "anthropic-ratelimit-tokens-remaining": "7000",
      "anthropic-ratelimit-input-tokens-limit": "40000",
      "anthropic-ratelimit-input-tokens-remaining": "39000",
      "anthropic-ratelimit-output-tokens-limit": "8000",
      "anthropic-ratelimit-output-tokens-remaining": "7000",
    });
    expect(seen).toMatchObject({
      requests: { limit: 50, remaining: 49 },
      tokens: { limit: 8_000, remaining: 7_000 },
      input: { limit: 40_000, remaining: 39_000 },
      output: { limit: 8_000, remaining: 7_000 },
    });
  });

  it("leaves out what is absent or not a count, and gives nothing without any", () => {
    expect(read({})).toBeUndefined();
    expect(read({ "content-type": "application/json" })).toBeUndefined();
    expect(read({ "x-ratelimit-limit-requests": "lots", "x-ratelimit-remaining-requests": "-3" })).toBeUndefined();
    expect(read({ "x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "" })).toMatchObject({ requests: { limit: 60, remaining: null } });
  });

  it("reads only the family's headers when the answer's API is known: four lookups for OpenAI, not eight", () => {
    const asked: string[] = [];
    const headers = new Headers({ "x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "59", "anthropic-ratelimit-input-tokens-limit": "9" });
    const get = (name: string) => (asked.push(name), headers.get(name));
    expect(rateObservation(get, "openai")).toEqual({ requests: { limit: 60, remaining: 59 }, at: expect.any(Number) }); // Anthropic's header is not read
    expect(asked).toHaveLength(4);
    asked.length = 0;
    expect(rateObservation(get, "anthropic")).toMatchObject({ input: { limit: 9, remaining: null } });
    expect(asked.every((name) => name.startsWith("anthropic-"))).toBe(true);
    expect(rateObservation(get)).toMatchObject({ requests: { limit: 60 }, input: { limit: 9 } }); // unknown: both
  });
});
