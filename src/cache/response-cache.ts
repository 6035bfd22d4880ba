/**
 * The response cache (opt-in per job: `"cache": {"ttl_secs": N}`), kept in D1 (see
 * BENCHMARKS.md, "Response cache store", for why D1 and not KV or the Cache API).
 *
 * A call's key is a SHA-256 of its canonical form: the tenant, provider, endpoint base URL, model,
 * system prompt, the prompt as rendered for the task's first attempt (a retry's guidance is not
 * part of it, so an item that needed a retry is served the output it ended with), the output
 * schema and the sampling parameters. Only answers that passed validation are kept, and a reused
 * answer is validated again. The reader's TTL decides what is fresh; the hourly cron deletes rows
 * older than the largest TTL. A store or lookup that fails is a miss: the cache never fails a task.
 */
import { canonicalJson } from "../lib/canonical-json";
import { sha256Hex } from "../lib/crypto";
import type { Usage } from "../llm/types";
import type { CallSpec } from "../engine/types";

export const MAX_CACHE_TTL_SECS = 30 * 86_400;
/** Answers longer than this are not kept (D1 rows are capped at 2 MB; a miss only costs a call). */
export const MAX_CACHED_TEXT_CHARS = 1_000_000;
/** Keys looked up per D1 statement (D1 binds at most 100 parameters per statement). */
const KEYS_PER_LOOKUP = 90;

export interface CacheScope {
  db: D1Database;
  tenantId: string;
  ttlSecs: number;
}

export interface CachedAnswer {
  text: string;
  usage: Usage; // what the original call cost
}

/** The key of one call as sent for a task's first attempt. */
export function callKey(tenantId: string, call: CallSpec, baseUrl: string | null, prompt: string): Promise<string> {
  return sha256Hex(
    canonicalJson({
      v: 1,
      tenant: tenantId,
      base_url: baseUrl,
      model: call.model,
      system: call.systemPrompt,
      prompt,
      output_schema: call.outputSchema,
      temperature: call.temperature,
      max_tokens: call.maxTokens,
      ...(call.embedding ? { embedding: call.embedding } : {}),
    }),
  );
}

const freshSince = (scope: CacheScope, now: number) => now - scope.ttlSecs * 1000;

export async function lookup(scope: CacheScope, key: string, now = Date.now()): Promise<CachedAnswer | null> {
  try {
    const row = await scope.db
      .prepare("SELECT text, input_tokens, output_tokens FROM response_cache WHERE tenant_id = ? AND key = ? AND created_ms >= ?")
      .bind(scope.tenantId, key, freshSince(scope, now))
      .first<{ text: string; input_tokens: number; output_tokens: number }>();
    return row ? { text: row.text, usage: { input_tokens: row.input_tokens, output_tokens: row.output_tokens } } : null;
  } catch (err) {
    console.error("response cache lookup failed; calling the model", err);
    return null;
  }
}

export async function remember(scope: CacheScope, key: string, answer: CachedAnswer, now = Date.now()): Promise<void> {
  if (answer.text.length > MAX_CACHED_TEXT_CHARS) return;
  try {
    await scope.db
      .prepare(
        `INSERT INTO response_cache (tenant_id, key, text, input_tokens, output_tokens, created_ms) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, key) DO UPDATE SET text = excluded.text, input_tokens = excluded.input_tokens,
           output_tokens = excluded.output_tokens, created_ms = excluded.created_ms`,
      )
      .bind(scope.tenantId, key, answer.text, answer.usage.input_tokens, answer.usage.output_tokens, now)
      .run();
  } catch (err) {
    console.error("response cache store failed; the answer is not kept", err);
  }
}

/** Which of `keys` have a fresh answer (for estimates). */
export async function freshKeys(scope: CacheScope, keys: string[], now = Date.now()): Promise<Set<string>> {
  const found = new Set<string>();
  const unique = [...new Set(keys)];
  try {
    for (let at = 0; at < unique.length; at += KEYS_PER_LOOKUP) {
      const chunk = unique.slice(at, at + KEYS_PER_LOOKUP);
      const { results } = await scope.db
        .prepare(`SELECT key FROM response_cache WHERE tenant_id = ? AND created_ms >= ? AND key IN (${chunk.map(() => "?").join(",")})`)
        .bind(scope.tenantId, freshSince(scope, now), ...chunk)
        .all<{ key: string }>();
      for (const row of results) found.add(row.key);
    }
  } catch (err) {
    console.error("response cache lookup failed; the estimate counts fewer cached calls", err);
  }
  return found;
}

/** The retention cron: answers older than any TTL can ask for go. Returns how many. */
export async function sweepCache(db: D1Database, now = Date.now()): Promise<number> {
  const result = await db
    .prepare("DELETE FROM response_cache WHERE created_ms < ?")
    .bind(now - MAX_CACHE_TTL_SECS * 1000)
    .run();
  return result.meta.changes ?? 0;
}
