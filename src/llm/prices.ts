/**
 * What a call costs in US dollars (contract v3, "Cost in dollars"). A price is USD per million
 * tokens of each kind: `input` (uncached prompt), `cached_input` (read from the provider's prompt
 * cache), `cache_write` (written to it: Anthropic bills 1.25× input for a 5-minute cache; OpenAI
 * writes at the input price) and `output`; `batch` multiplies all four for a provider batch call.
 *
 * The shipped table holds the common models as their providers' pricing pages listed them on the
 * date in READ_ON; a deployment overrides or adds models with the `PRICES` variable, JSON
 * `{"<provider>/<model>": {"input", "output", "cached_input"?, "cache_write"?, "batch"?}}`
 * (a missing cached_input or cache_write is billed at `input`: never below the list price).
 * A model matches its table name exactly or with a dated snapshot suffix (`gpt-4o-2024-08-06`,
 * `claude-sonnet-4-5-20250929`); any other model has no price, and its cost is null — never a guess.
 */
import { deploymentTable, modelEntries, snapshotOf } from "./model-tables";
import { ConfigurationError } from "../lib/errors";
import type { Usage } from "./types";

export interface Price {
  input: number;
  cached_input: number;
  cache_write: number;
  output: number;
  /** The multiplier of a provider batch call (both providers: 0.5). */
  batch: number;
}

/** How a call ran, as it is priced: `flex` is a realtime call the flex tier served (the batch rates). */
export type ExecutionMode = "realtime" | "batch" | "flex";

/** The date the shipped prices were read from the providers' pricing pages. */
export const PRICES_READ_ON = "2026-11-28";

const HALF = 0.5; // OpenAI Batch and Anthropic Message Batches: 50 % of every token kind

/** OpenAI: [input, cached input, output, cache write?]; without a cache write price, writes cost the input price (GPT-5.6 and later: 1.25×). */
const OPENAI: Record<string, [number, number, number, number?]> = {
  "gpt-6-luna": [0.1, 0.01, 0.5, 0.125],
  "gpt-6-sol": [2, 0.2, 10, 2.5],
  "gpt-5.6-luna": [0.2, 0.02, 1.2, 0.25],
  "gpt-5.6-terra": [2, 0.2, 12, 2.5],
  "gpt-4o": [2.5, 1.25, 10],
  "gpt-4o-mini": [0.15, 0.075, 0.6],
  "gpt-4.1": [2, 0.5, 8],
  "gpt-4.1-mini": [0.4, 0.1, 1.6],
  "gpt-4.1-nano": [0.1, 0.025, 0.4],
  "gpt-5": [1.25, 0.125, 10],
  "gpt-5-mini": [0.25, 0.025, 2],
  "gpt-5-nano": [0.05, 0.005, 0.4],
  o3: [2, 0.5, 8],
  "o4-mini": [1.1, 0.275, 4.4],
  // Embedding models: input only (an embedding writes no tokens), half in a batch.
  "text-embedding-3-small": [0.02, 0.02, 0],
  "text-embedding-3-large": [0.13, 0.13, 0],
  "text-embedding-ada-002": [0.1, 0.1, 0],
};

/** Anthropic: [input, output]; cache reads 0.1× input, 5-minute cache writes 1.25× input. */
const ANTHROPIC: Record<string, [number, number]> = {
  "claude-opus-4-5": [5, 25],
  "claude-opus-4-6": [5, 25],
  "claude-opus-4-1": [15, 75],
  "claude-sonnet-4-5": [3, 15],
  "claude-sonnet-4-6": [3, 15],
  "claude-sonnet-4": [3, 15],
  "claude-sonnet-5": [2, 10],
  "claude-haiku-4-5": [1, 5],
  "claude-3-5-haiku": [0.8, 4],
};

function shipped(): Map<string, Price> {
  const table = new Map<string, Price>();
  for (const [name, [input, cached, output, write]] of Object.entries(OPENAI)) {
    table.set(`openai/${name}`, { input, cached_input: cached, cache_write: write ?? input, output, batch: HALF });
  }
  for (const [name, [input, output]] of Object.entries(ANTHROPIC)) {
    table.set(`anthropic/${name}`, { input, cached_input: input * 0.1, cache_write: input * 1.25, output, batch: HALF });
  }
  return table;
}

const SHIPPED = shipped();

const MAX_PRICE = 1e6; // USD per million tokens: far above any model; bounds a mistyped override

function priceField(raw: Record<string, unknown>, field: string, model: string, fallback?: number): number {
  const value = raw[field] ?? fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_PRICE) {
    throw new ConfigurationError(`PRICES: "${model}".${field} must be a number of USD per million tokens (0 to ${MAX_PRICE})`);
  }
  return value;
}

/** The deployment's `PRICES`, parsed (a ConfigurationError names what is wrong). */
export function parsePrices(text: string): Map<string, Price> {
  const out = new Map<string, Price>();
  for (const [model, raw] of modelEntries(text, "PRICES", '{"<provider>/<model>": {"input", "output", …}}')) {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new ConfigurationError(`PRICES: "${model}" must be an object`);
    const fields = raw as Record<string, unknown>;
    const input = priceField(fields, "input", model);
    const batch = fields.batch ?? HALF;
    if (typeof batch !== "number" || !(batch > 0 && batch <= 1)) throw new ConfigurationError(`PRICES: "${model}".batch must be a multiplier in (0, 1]`);
    out.set(model, {
      input,
      cached_input: priceField(fields, "cached_input", model, input),
      cache_write: priceField(fields, "cache_write", model, input),
      output: priceField(fields, "output", model),
      batch,
    });
  }
  return out;
}

const deploymentPrices = deploymentTable("PRICES", parsePrices);

/** The price of a model (`<provider>/<name>`), or null when neither the deployment nor the shipped table has it. */
export function priceOf(env: object, model: string): Price | null {
  const own = deploymentPrices(env);
  const exact = own?.get(model) ?? SHIPPED.get(model);
  if (exact) return exact;
  const snapshot = snapshotOf(model);
  return snapshot ? (own?.get(snapshot) ?? SHIPPED.get(snapshot) ?? null) : null;
}

/** USD of one call's usage at a price: cached and cache-written input tokens are parts of `input_tokens`. */
export function costOf(price: Price, usage: Usage, mode: ExecutionMode = "realtime"): number {
  const read = usage.cache_read_tokens ?? 0;
  const write = usage.cache_write_tokens ?? 0;
  const plain = Math.max(0, usage.input_tokens - read - write);
  const usd = (plain * price.input + read * price.cached_input + write * price.cache_write + usage.output_tokens * price.output) / 1e6;
  return mode === "realtime" ? usd : usd * price.batch;
}

/** The usage with its cost: null when it spent tokens on a model with no price. */
export function priced(env: object, model: string, usage: Usage, mode: ExecutionMode = "realtime"): Usage {
  if (usage.input_tokens === 0 && usage.output_tokens === 0) return { ...usage, cost_usd: 0 };
  const price = priceOf(env, model);
  return { ...usage, cost_usd: price ? costOf(price, usage, mode) : null };
}

/** A dollar figure as the API shows it: rounded to a millionth of a cent (sums of floats carry noise below that). */
export const usd = (n: number): number => Math.round(n * 1e8) / 1e8;
