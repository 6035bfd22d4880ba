/**
 * The response cache's store in the real D1: keys that differ in anything the call sends, tenant
 * scoping, the reader's TTL, lookups of many keys at once (past D1's bound-parameter limit), the
 * retention sweep from the cron trigger, and a failing store that is a miss, never an error.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { callKey, freshKeys, lookup, MAX_CACHE_TTL_SECS, MAX_CACHED_TEXT_CHARS, remember } from "../../src/cache/response-cache";
import { call } from "./coordinator/drive";
import { capturingLogs } from "./helpers";

const USAGE = { input_tokens: 7, output_tokens: 3 };
const scope = (tenantId: string, ttlSecs = 60) => ({ db: env.DB, tenantId, ttlSecs });
const tenant = () => `ten_${crypto.randomUUID().slice(0, 8)}`;

describe("the response cache store", () => {
  it("keys every part of the call: tenant, endpoint, model, system prompt, prompt, schema, sampling", async () => {
    const spec = call();
    const keys = await Promise.all([
      callKey("t1", spec, null, "p"),
      callKey("t2", spec, null, "p"),
      callKey("t1", spec, "https://proxy.example", "p"),
      callKey("t1", call({ model: "openai-compatible/other" }), null, "p"),
      callKey("t1", call({ systemPrompt: "be brief" }), null, "p"),
      callKey("t1", spec, null, "q"),
      callKey("t1", call({ outputSchema: { type: "object" } }), null, "p"),
      callKey("t1", call({ temperature: 0.2 }), null, "p"),
      callKey("t1", call({ maxTokens: 11 }), null, "p"),
    ]);
    expect(new Set(keys).size).toBe(keys.length);
    // What the call does not send (timeouts, retries, guidance text) is not part of it.
    expect(await callKey("t1", call({ timeoutMs: 1, retryGuidance: "other", maxOutputBytes: 5 }), null, "p")).toBe(keys[0]);
  });

  it("answers within the reader's TTL and only for the tenant that stored it", async () => {
    const [a, b] = [tenant(), tenant()];
    const now = Date.now();
    await remember(scope(a), "k1", { text: "answer", usage: USAGE }, now - 30_000);
    expect(await lookup(scope(a, 60), "k1", now)).toEqual({ text: "answer", usage: USAGE });
    expect(await lookup(scope(a, 10), "k1", now)).toBeNull(); // older than this reader allows
    expect(await lookup(scope(b, 60), "k1", now)).toBeNull();
    await remember(scope(a), "k1", { text: "newer", usage: USAGE }, now);
    expect((await lookup(scope(a, 10), "k1", now))?.text).toBe("newer");
  });

  it("does not keep answers over its size bound", async () => {
    const a = tenant();
    await remember(scope(a), "big", { text: "x".repeat(MAX_CACHED_TEXT_CHARS + 1), usage: USAGE });
    expect(await lookup(scope(a), "big")).toBeNull();
  });

  it("finds which of many keys are fresh, past the bound-parameter limit of one statement", async () => {
    const a = tenant();
    const keys = Array.from({ length: 250 }, (_, i) => `key${i}`);
    for (const key of keys.filter((_, i) => i % 3 === 0)) await remember(scope(a), key, { text: key, usage: USAGE });
    const fresh = await freshKeys(scope(a), [...keys, "key0"]);
    expect(fresh.size).toBe(84);
    expect(fresh.has("key249")).toBe(true);
    expect(fresh.has("key1")).toBe(false);
  });

  it("a failing store is a miss: lookup answers null and remember does not throw", async () => {
    const a = tenant();
    await remember(scope(a), "k", { text: "kept", usage: USAGE });
    await env.DB.exec("ALTER TABLE response_cache RENAME TO response_cache_away"); // every statement on it now fails
    try {
      const { logged } = await capturingLogs(async () => {
        expect(await lookup(scope(a), "k")).toBeNull();
        await expect(remember(scope(a), "k2", { text: "x", usage: USAGE })).resolves.toBeUndefined();
        expect(await freshKeys(scope(a), ["k"])).toEqual(new Set());
      });
      expect(logged).toEqual([
        expect.stringMatching(/^response cache lookup failed; calling the model .*no such table/),
        expect.stringMatching(/^response cache store failed; the answer is not kept .*no such table/),
        expect.stringMatching(/^response cache lookup failed; the estimate counts fewer cached calls .*no such table/),
      ]);
    } finally {
      await env.DB.exec("ALTER TABLE response_cache_away RENAME TO response_cache");
    }
    expect((await lookup(scope(a), "k"))?.text).toBe("kept");
  });

  it("the hourly cron deletes answers older than the largest TTL and keeps the rest", async () => {
    const a = tenant();
    const now = Date.now();
    await remember(scope(a), "old", { text: "old", usage: USAGE }, now - MAX_CACHE_TTL_SECS * 1000 - 60_000);
    await remember(scope(a), "recent", { text: "recent", usage: USAGE }, now - 86_400_000);
    const ctx = createExecutionContext();
    const { logged } = await capturingLogs(async () => {
      await worker.scheduled(createScheduledController({ cron: "17 * * * *", scheduledTime: now }), env, ctx);
      await waitOnExecutionContext(ctx);
    });
    expect(logged).toContainEqual(expect.stringMatching(/^retention: deleted \d+ cached answers$/));
    const { results } = await env.DB.prepare("SELECT key FROM response_cache WHERE tenant_id = ?").bind(a).all<{ key: string }>();
    expect(results.map((r) => r.key)).toEqual(["recent"]);
  });
});
