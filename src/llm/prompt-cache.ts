/**
 * The provider's prompt cache (contract v3, "Prompt caching"). A stage's calls share a prefix:
 * the system prompt and the template's text before its first variable. Anthropic caches a prefix
 * only when the request marks its end with `cache_control` and it reaches the model's minimum
 * cacheable length (shorter marked prefixes are processed normally, so the mark is only sent when
 * the prefix is long enough); OpenAI caches prefixes of 1,024 tokens and more by itself, and
 * Fanout's requests already keep the shared part first.
 */
import { promptTokens } from "../engine/estimate";
import { parseModel } from "./models";

/** The template's literal text before its first tag, expression or comment: the same in every item's prompt. */
export function templatePrefix(source: string): string {
  const first = source.search(/\{[{%#]/);
  return first < 0 ? source : source.slice(0, first);
}

/**
 * Anthropic's minimum cacheable prompt length in tokens, by model (Anthropic's prompt-caching
 * docs, read 2026-11-26): 4,096 for Opus 4.5/4.6 and Haiku 4.5, 2,048 for Sonnet 4.6 and the
 * Haiku 3 family, 1,024 for the others.
 */
export function minCacheableTokens(model: string): number {
  if (/opus-4-[56]|haiku-4-5/.test(model)) return 4096;
  if (/sonnet-4-6|haiku-3|3-5-haiku|3-haiku/.test(model)) return 2048;
  return 1024;
}

/**
 * Where a call's shared prefix ends, when it is worth marking: `user` characters of the first
 * user message (0: the system prompt alone), or null when the prefix is too short to be cached or
 * the rendered prompt does not start with it (a whitespace-trimming tag ate its end).
 */
export function cacheBreak(model: string, system: string | null, prompt: string, prefix: string): { user: number } | null {
  const shared = prompt.startsWith(prefix) ? prefix : prompt.startsWith(prefix.trimEnd()) ? prefix.trimEnd() : "";
  if (promptTokens(shared, system) < minCacheableTokens(model)) return null;
  return { user: shared.length };
}

export interface SharedPrefix {
  tokens: number;
  /** The provider bills writing it (Anthropic's cache writes). */
  writes: boolean;
}

const OPENAI_MIN_CACHED = 1024; // OpenAI's prompt caching: prefixes of 1,024 tokens and more…
const OPENAI_CACHE_STEP = 128; // …cached in steps of 128 tokens

/** A prompt's prefix the provider would cache (an estimate's view: the stage's calls share it), or null when it caches none. */
export function sharedPrefix(model: string, system: string | null, prompt: string, template: string): SharedPrefix | null {
  const provider = parseModel(model).provider;
  const prefix = templatePrefix(template);
  if (provider === "anthropic") {
    const cut = cacheBreak(model, system, prompt, prefix);
    return cut ? { tokens: promptTokens(prompt.slice(0, cut.user), system), writes: true } : null;
  }
  if (provider !== "openai") return null;
  const tokens = promptTokens(prompt.startsWith(prefix) ? prefix : "", system);
  return tokens >= OPENAI_MIN_CACHED ? { tokens: tokens - (tokens % OPENAI_CACHE_STEP), writes: false } : null;
}

/** Whether a stage's calls share a prefix long enough for the provider to cache (its calls then go where the cache is: a pool's one deployment). */
export function sharesCachedPrefix(model: string, system: string | null, template: string): boolean {
  const tokens = promptTokens(templatePrefix(template), system);
  return tokens >= (parseModel(model).provider === "anthropic" ? minCacheableTokens(model) : OPENAI_MIN_CACHED);
}
