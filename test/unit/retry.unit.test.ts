import { describe, expect, it } from "vitest";
import {
  backoffCapMs,
  backoffMs,
  isRateLimited,
  MAX_RETRY_AFTER_MS,
  nextStep,
  transientDelayMs,
  promptWithGuidance,
  type AttemptOutcome,
} from "../../src/engine/retry-policy";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { classify, describeFailure, isQuotaSpent, isThrottle, retryAfterMs, ProviderFailure } from "../../src/llm/errors";

const usage = { input_tokens: 1, output_tokens: 1 };

describe("retry policy", () => {
  it("backs off at least min(0.5·2^(n−1), 8) s, plus up to half of that in jitter", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffCapMs(n))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect(backoffMs(3, () => 0)).toBe(2000);
    expect(backoffMs(3, () => 0.5)).toBe(2500);
    expect(backoffMs(3, () => 0.9999)).toBe(2999);
  });

  it("spreads a burst of simultaneous 429s instead of sending them back in lockstep", () => {
    const transient: AttemptOutcome = { kind: "transient", error: "429", retryAfterMs: null, usage };
    const delays = Array.from({ length: 100 }, () => {
      const step = nextStep(transient, 3, 5);
      return step.step === "retry" ? step.delayMs : -1;
    });
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(2000);
    expect(Math.max(...delays)).toBeLessThan(3000);
    expect(new Set(delays).size).toBeGreaterThan(50);
  });

  it("retries invalid output at once with its problems, then fails as validation", () => {
    const invalid: AttemptOutcome = { kind: "invalid", error: "bad", problems: ["p"], usage };
    expect(nextStep(invalid, 1, 2)).toEqual({ step: "retry", delayMs: 0, guidance: ["p"] });
    expect(nextStep(invalid, 3, 2)).toEqual({ step: "fail", error: "bad", errorKind: "validation" });
  });

  it("honours Retry-After when longer than the backoff", () => {
    const transient: AttemptOutcome = { kind: "transient", error: "429", retryAfterMs: 3000, usage };
    const half = () => 0.5;
    expect(nextStep(transient, 1, 3, half)).toEqual({ step: "retry", delayMs: 3125, guidance: null });
    expect(nextStep({ ...transient, retryAfterMs: 100 }, 2, 3, half)).toEqual({ step: "retry", delayMs: 1250, guidance: null });
    expect(nextStep(transient, 4, 3)).toMatchObject({ step: "fail", errorKind: "llm_error" });
  });

  it("retries timeouts without backoff and fails permanent errors at once", () => {
    expect(nextStep({ kind: "timeout", error: "t", usage }, 1, 1)).toEqual({ step: "retry", delayMs: 0, guidance: null });
    expect(nextStep({ kind: "timeout", error: "t", usage }, 2, 1)).toMatchObject({ step: "fail", errorKind: "timeout" });
    expect(nextStep({ kind: "permanent", error: "401", errorKind: "llm_error", usage }, 1, 5)).toMatchObject({ step: "fail" });
  });

  it("adds the guidance and the first problems to a retry prompt", () => {
    const prompt = promptWithGuidance("Do it", "Return JSON.", ["a", "b", "c", "d", "e", "f"]);
    expect(prompt).toBe("Do it\n\nReturn JSON.\nProblems with your previous response:\n- a\n- b\n- c\n- d\n- e");
    expect(promptWithGuidance("Do it", "Return JSON.", null)).toBe("Do it");
  });
});

describe("rate limits are back-pressure, not failures", () => {
  const throttle: AttemptOutcome = { kind: "transient", error: "429 fake", retryAfterMs: 2_000, throttled: true, usage };
  const wait = (throttles: number, since: number | null, now: number) => ({ throttles, since, maxWaitMs: 60_000, now });

  it("retries a throttled call however many attempts it made, after Retry-After, without using up max_retries", () => {
    const step = nextStep(throttle, 40, 0, () => 0, wait(39, 1_000, 30_000));
    expect(step).toEqual({ step: "retry", delayMs: 8_000, guidance: null }); // the backoff's cap, longer than Retry-After
    expect(nextStep(throttle, 1, 0, () => 0, wait(0, null, 5))).toEqual({ step: "retry", delayMs: 2_000, guidance: null });
  });

  it("fails rate_limited once the task has waited max_wait since its first throttle in a row, and not before", () => {
    expect(nextStep(throttle, 9, 3, () => 0, wait(8, 1_000, 61_000))).toMatchObject({
      step: "fail",
      errorKind: "rate_limited",
      error: expect.stringContaining("Rate limited for 60 s"),
    });
    const last = nextStep(throttle, 9, 3, () => 0, wait(8, 1_000, 60_500));
    expect(last).toEqual({ step: "retry", delayMs: 501, guidance: null }); // not past the max wait by more than a moment
  });

  it("counts only the calls that were not throttled against max_retries", () => {
    const server: AttemptOutcome = { kind: "transient", error: "500", retryAfterMs: null, usage };
    // 5 attempts, 4 of them throttled: this 500 is the first counted attempt; max_retries 0 fails it.
    expect(nextStep(server, 5, 0, () => 0, wait(4, null, 0))).toMatchObject({ step: "fail", errorKind: "llm_error" });
    expect(nextStep(server, 5, 1, () => 0, wait(4, null, 0))).toMatchObject({ step: "retry" });
    // Without the task's waits (an executor that retries inside itself), every attempt counts, a throttle too.
    expect(nextStep(throttle, 2, 1)).toMatchObject({ step: "fail", errorKind: "llm_error" });
  });

  it("a tier's busy answer (flex) waits as a throttle does, but is no news of the key's rate limits", () => {
    const busy: AttemptOutcome = { ...throttle, busy: true };
    expect(nextStep(busy, 40, 0, () => 0, wait(39, 1_000, 30_000))).toEqual(nextStep(throttle, 40, 0, () => 0, wait(39, 1_000, 30_000)));
    expect([isRateLimited(throttle), isRateLimited(busy)]).toEqual([true, false]);
  });
});

describe("failure classification", () => {
  const withStatus = (status: number, headers?: Record<string, string>) =>
    Object.assign(new Error(`status ${status}`), { status, headers: new Headers(headers) });

  it.each([
    [408, "transient"],
    [409, "transient"],
    [429, "transient"],
    [500, "transient"],
    [503, "transient"],
    [529, "transient"],
    [400, "permanent"],
    [401, "permanent"],
    [403, "permanent"],
    [404, "permanent"],
    [422, "permanent"],
  ])("status %i is %s", (status, expected) => {
    expect(classify(withStatus(status))).toBe(expected);
  });

  it("treats SDK timeouts as timeouts and connection failures as transient, through causes", () => {
    expect(classify(new OpenAI.APIConnectionTimeoutError())).toBe("timeout");
    expect(classify(new Anthropic.APIConnectionTimeoutError())).toBe("timeout");
    expect(classify(new DOMException("signal timed out", "TimeoutError"))).toBe("timeout");
    expect(classify(new OpenAI.APIConnectionError({ cause: new Error("ECONNRESET") }))).toBe("transient");
    expect(classify(new Anthropic.APIConnectionError({ message: "refused" }))).toBe("transient");
    expect(classify(new Error("outer", { cause: new TypeError("fetch failed") }))).toBe("transient");
    expect(classify(new Error("wrapped", { cause: withStatus(503) }))).toBe("transient");
    expect(classify(new ProviderFailure("no key", "permanent"))).toBe("permanent");
  });

  it("never delays one retry by more than MAX_RETRY_AFTER_MS, whatever the provider's Retry-After", () => {
    expect(transientDelayMs(1, 864_000_000, () => 0)).toBe(MAX_RETRY_AFTER_MS);
    expect(transientDelayMs(1, 3_000, () => 0)).toBe(3_000);
  });

  it("takes OpenAI's spent quota (insufficient_quota and its codes) for a permanent failure, not back-pressure", () => {
    const headers = new Headers({ "retry-after": "864000" });
    const quota = (code: string | null, type = "insufficient_quota") =>
      OpenAI.APIError.generate(
        429,
        { error: { message: "You exceeded your current quota, please check your plan and billing details.", type, param: null, code } },
        undefined,
        headers,
      );
    for (const err of [quota("insufficient_quota"), quota(null), quota("credit_balance_exhausted", "requests"), quota("project_spend_limit_exceeded")]) {
      expect(isQuotaSpent(err)).toBe(true);
      expect(classify(err)).toBe("permanent");
      expect(isThrottle(err)).toBe(false);
      expect(describeFailure(err)).toMatch(/quota for this credential is spent \(insufficient_quota.*You exceeded your current quota/);
    }
    const limited = OpenAI.APIError.generate(
      429,
      { error: { message: "Rate limit reached", type: "requests", param: null, code: "rate_limit_exceeded" } },
      undefined,
      headers,
    );
    expect(isQuotaSpent(limited)).toBe(false);
    expect(isThrottle(limited)).toBe(true);
    expect(classify(limited)).toBe("transient");
    // A 400 that names the code is not a spent quota's 429: it stays what its status says.
    expect(isQuotaSpent(OpenAI.APIError.generate(400, { error: { message: "x", type: "insufficient_quota", code: null } }, undefined, headers))).toBe(false);
  });

  it("reads Retry-After in seconds, as a date, and retry-after-ms", () => {
    expect(retryAfterMs(withStatus(429, { "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(withStatus(429, { "retry-after-ms": "1500" }))).toBe(1500);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(withStatus(429, { "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }), now)).toBe(5000);
    expect(retryAfterMs(withStatus(429))).toBeUndefined();
  });
});
