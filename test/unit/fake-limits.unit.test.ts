/** The fake model server's rate limits, read through the real SDKs as a provider's would be. */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeModelServer, type FakeModelServer } from "../fake-model/server.ts";
import { openAiDuration, type LimitConfig } from "../fake-model/limits.ts";

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(() => fake.close());

const limit = (key: string, limits: LimitConfig | null) => fetch(`${fake.url}/_fake/limits`, { method: "POST", body: JSON.stringify({ key, limits }) });
const prompt = (n: number) => `${"x".repeat(4 * n - 12)} <<fake>>`; // about n tokens as the fake counts them

describe("the fake model server's rate limits", () => {
  it("OpenAI: requests and tokens (prompt + max_tokens) per minute, x-ratelimit headers on every answer, 429 with retry-after past them", async () => {
    // Windows that refill slowly (2 requests and 1,000 tokens at once; one request per 10 s), so what the headers say does not move while the test reads them.
    await limit("sk-rl-openai", { rpm: 6, tpm: 3_000, headers: "openai", burst_secs: 20 });
    const client = new OpenAI({ apiKey: "sk-rl-openai", baseURL: `${fake.url}/v1`, maxRetries: 0 });
    const call = () => client.chat.completions.create({ model: "m", max_tokens: 50, messages: [{ role: "user", content: prompt(100) }] }).withResponse();
    const first = await call();
    const headers = Object.fromEntries([...first.response.headers].filter(([k]) => k.startsWith("x-ratelimit")));
    expect(headers).toEqual({
      "x-ratelimit-limit-requests": "6",
      "x-ratelimit-remaining-requests": "1",
      "x-ratelimit-reset-requests": expect.stringMatching(/^\d+(\.\d+)?s$/),
      "x-ratelimit-limit-tokens": "3000",
      "x-ratelimit-remaining-tokens": expect.any(String),
      "x-ratelimit-reset-tokens": expect.stringMatching(/^\d+(\.\d+)?s$/),
    });
    const remaining = Number(headers["x-ratelimit-remaining-tokens"]);
    expect(remaining).toBeGreaterThanOrEqual(850); // 1,000 − (~100 prompt + 50 max_tokens), refilling 50 a second
    expect(remaining).toBeLessThan(1_000);
    await call();
    const refused = await call().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    const refusal = (refused as InstanceType<typeof OpenAI.RateLimitError>).headers;
    expect(refusal.get("retry-after")).toMatch(/^(9|10)$/); // the next request's room: 10 s away
    expect(refusal.get("x-ratelimit-remaining-requests")).toBe("0");
  });

  it("Anthropic: input tokens on arrival, output tokens as produced, anthropic-ratelimit headers with RFC 3339 resets", async () => {
    // 100 input tokens at once, refilling 10 a second.
    await limit("sk-ant-rl", { rpm: 600, itpm: 600, otpm: 60_000, headers: "anthropic", burst_secs: 10 });
    const client = new Anthropic({ apiKey: "sk-ant-rl", baseURL: fake.url, maxRetries: 0 });
    const call = () => client.messages.create({ model: "m", max_tokens: 1_000, messages: [{ role: "user", content: prompt(60) }] }).withResponse();
    const first = await call();
    const headers = first.response.headers;
    expect(headers.get("anthropic-ratelimit-requests-limit")).toBe("600");
    expect(headers.get("anthropic-ratelimit-input-tokens-limit")).toBe("600");
    const remaining = Number(headers.get("anthropic-ratelimit-input-tokens-remaining"));
    expect(remaining).toBeGreaterThanOrEqual(40); // 100 − 60: the input was charged, max_tokens (1,000) was not
    expect(remaining).toBeLessThan(60);
    expect(headers.get("anthropic-ratelimit-output-tokens-limit")).toBe("60000");
    expect(headers.get("anthropic-ratelimit-input-tokens-reset")).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(headers.get("anthropic-ratelimit-tokens-limit")).toBe("600"); // the tighter of the two token windows
    const refused = await call().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    expect((refused as InstanceType<typeof Anthropic.RateLimitError>).headers.get("retry-after")).toMatch(/^[12]$/);
  });

  it("without headers: the same limits, answered only by 429s", async () => {
    await limit("sk-rl-quiet", { rpm: 60, headers: "none", burst_secs: 1 });
    const client = new OpenAI({ apiKey: "sk-rl-quiet", baseURL: `${fake.url}/v1`, maxRetries: 0 });
    const ok = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi <<fake>>" }] }).withResponse();
    expect([...ok.response.headers.keys()].filter((k) => k.includes("ratelimit"))).toEqual([]);
    const refused = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi <<fake>>" }] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    await limit("sk-rl-quiet", null);
    expect((await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi <<fake>>" }] })).choices).toHaveLength(1);
  });

  it("writes OpenAI's reset durations", () => {
    expect([20, 999.2, 1_500, 6_000, 360_000, 61_500].map(openAiDuration)).toEqual(["20ms", "1000ms", "1.5s", "6s", "6m0s", "1m2s"]);
  });
});
