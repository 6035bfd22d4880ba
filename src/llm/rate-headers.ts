/**
 * The rate-limit headers of a provider's answer (success or error), read into the pacer's terms
 * (src/engine/pacing.ts): OpenAI `x-ratelimit-{limit,remaining}-{requests,tokens}`; Anthropic
 * `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining}`. The reset
 * headers are not needed: the pacer refills continuously at the limit. Absent or malformed
 * headers are left out; an answer without any gives nothing.
 */
import type { ObservedWindow, RateObservation } from "../engine/pacing";

export type HeaderReader = (name: string) => string | null;

const count = (raw: string | null): number | null => {
  if (raw === null || raw.trim() === "") return null;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : null;
};

function windowOf(get: HeaderReader, limit: string, remaining: string): ObservedWindow | undefined {
  const w = { limit: count(get(limit)), remaining: count(get(remaining)) };
  return w.limit === null && w.remaining === null ? undefined : w;
}

/**
 * `family`: the API the answer came from, when known — only its headers are read (a header lookup
 * crosses into the runtime: eight of them were ~0.15 ms of CPU per call, BENCHMARKS.md); unknown
 * (an error's headers), both families'.
 */
export function rateObservation(get: HeaderReader, family?: "openai" | "anthropic"): RateObservation | undefined {
  const seen: RateObservation = {};
  const none = () => undefined;
  const openai = family === "anthropic" ? none : (d: "requests" | "tokens") => windowOf(get, `x-ratelimit-limit-${d}`, `x-ratelimit-remaining-${d}`);
  const anthropic = family === "openai" ? none : (d: string) => windowOf(get, `anthropic-ratelimit-${d}-limit`, `anthropic-ratelimit-${d}-remaining`);
  const windows = {
    requests: openai("requests") ?? anthropic("requests"),
    tokens: openai("tokens") ?? anthropic("tokens"),
    input: anthropic("input-tokens"),
    output: anthropic("output-tokens"),
  };
  for (const [d, w] of Object.entries(windows)) if (w) seen[d as keyof typeof windows] = w;
  return Object.keys(seen).length > 0 ? { ...seen, at: Date.now() } : undefined;
}

/**
 * A reader of an answer's headers: the rate-limit ones gathered in one pass over them, at the
 * first lookup (the runtime's `Headers.get` is a call into it each time).
 */
export function fromHeaders(headers: Headers): HeaderReader {
  let rate: Map<string, string> | null = null;
  return (name) => {
    if (rate === null) {
      rate = new Map();
      for (const [key, value] of headers) if (key.startsWith("x-ratelimit-") || key.startsWith("anthropic-ratelimit-")) rate.set(key, value);
    }
    return rate.get(name) ?? null;
  };
}
