/**
 * A provider's rate limits, enforced per API key as the real APIs do, so pacing is tested against
 * what it will meet:
 * - OpenAI: requests and tokens per minute; a request is charged its prompt tokens plus its
 *   `max_tokens` when it arrives (never refunded); every answer carries
 *   `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (reset as a duration: `1s`, `6m0s`, `20ms`).
 * - Anthropic: requests, input tokens (charged on arrival) and output tokens (charged as produced,
 *   so they can run the window below zero) per minute; every answer carries
 *   `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`
 *   (reset as an RFC 3339 time; `tokens` is the tighter of the two token windows).
 * - `none`: the limits are enforced, but no header says so (a server that only answers 429).
 * A request over a limit is answered 429 with `retry-after` (whole seconds, as both send it) and
 * charged nothing. As on the real APIs, each model has its own windows: a key's limits apply to
 * each model apart, and a model may have limits of its own on the key. Each window refills continuously at limit/60 per second and holds at most
 * `burst_secs` of it (60: the whole minute at once; 1: the limit quantized to one-second periods).
 */
export type HeaderStyle = "openai" | "anthropic" | "none";

export interface LimitConfig {
  rpm: number;
  /** OpenAI's tokens per minute; Anthropic's input and output tokens per minute when itpm/otpm are absent. */
  tpm?: number | null;
  itpm?: number | null;
  otpm?: number | null;
  headers: HeaderStyle;
  burst_secs?: number;
}

class Window {
  readonly perMinute: number;
  readonly #burstSecs: number;
  #level: number;
  #at: number;

  // No parameter properties: `npm start` loads this file with Node's type stripping, which refuses them.
  constructor(perMinute: number, burstSecs: number, now: number) {
    this.perMinute = perMinute;
    this.#burstSecs = burstSecs;
    this.#level = this.capacity;
    this.#at = now;
  }

  get capacity(): number {
    return Math.max(1, (this.perMinute * this.#burstSecs) / 60);
  }

  level(now: number): number {
    this.#level = Math.min(this.capacity, this.#level + ((now - this.#at) * this.perMinute) / 60_000);
    this.#at = now;
    return this.#level;
  }

  /** Milliseconds until `amount` fits (0: now). An amount over the capacity fits once the window is full. */
  waitMs(amount: number, now: number): number {
    const missing = Math.min(amount, this.capacity) - this.level(now);
    return missing <= 0 ? 0 : Math.ceil((missing * 60_000) / this.perMinute);
  }

  take(amount: number, now: number): void {
    this.#level = this.level(now) - amount;
  }

  /** Milliseconds until it is full again. */
  resetMs(now: number): number {
    return Math.max(0, Math.ceil(((this.capacity - this.level(now)) * 60_000) / this.perMinute));
  }
}

/** OpenAI's reset durations: `20ms`, `1.5s`, `6m0s`. */
export function openAiDuration(ms: number): string {
  if (ms < 1_000) return `${Math.ceil(ms)}ms`;
  if (ms < 60_000) return `${Number((ms / 1_000).toFixed(3))}s`;
  return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1_000)}s`;
}

interface KeyState {
  config: LimitConfig;
  requests: Window;
  tokens: Window | null; // OpenAI tokens, or Anthropic input tokens
  output: Window | null; // Anthropic output tokens
}

export interface Admission {
  ok: boolean;
  /** The rate-limit headers to send with the answer, as they stand when it is sent (a 429's include retry-after). */
  headers(): Record<string, string>;
  /** Anthropic: charge the answer's output tokens once known. */
  settle(outputTokens: number): void;
}

const NO_LIMITS: Admission = { ok: true, headers: () => ({}), settle: () => undefined };

export class RateLimits {
  readonly #configs = new Map<string, LimitConfig>(); // by key, or by key and model
  readonly #windows = new Map<string, KeyState>(); // by key and model: each model has its own windows, as on the real APIs

  /** `model`: the limits of that model on the key (the key's own are every other model's). */
  set(key: string, config: LimitConfig | null, model: string | null = null): void {
    const at = model === null ? key : `${key}\u0000${model}`;
    for (const name of [...this.#windows.keys()]) if (name === at || (model === null && name.startsWith(`${key}\u0000`))) this.#windows.delete(name);
    if (config) this.#configs.set(at, config);
    else this.#configs.delete(at);
  }

  #state(key: string, model: string, now: number): KeyState | null {
    const at = `${key}\u0000${model}`;
    const known = this.#windows.get(at);
    if (known) return known;
    const config = this.#configs.get(at) ?? this.#configs.get(key);
    if (!config) return null;
    const burst = config.burst_secs ?? 60;
    const input = config.headers === "anthropic" ? (config.itpm ?? config.tpm) : config.tpm;
    const output = config.headers === "anthropic" ? (config.otpm ?? config.tpm) : null;
    const state: KeyState = {
      config,
      requests: new Window(config.rpm, burst, now),
      tokens: input ? new Window(input, burst, now) : null,
      output: output ? new Window(output, burst, now) : null,
    };
    this.#windows.set(at, state);
    return state;
  }

  /** A request of `inputTokens` asking for at most `maxTokens` out, made with `key` to `model`. */
  admit(key: string, model: string, inputTokens: number, maxTokens: number, now = Date.now()): Admission {
    const state = this.#state(key, model, now);
    if (!state) return NO_LIMITS;
    const charged = state.config.headers === "anthropic" ? inputTokens : inputTokens + maxTokens;
    const wait = Math.max(state.requests.waitMs(1, now), state.tokens?.waitMs(charged, now) ?? 0, state.output?.waitMs(1, now) ?? 0);
    if (wait > 0) {
      const retryAfter = String(Math.max(1, Math.ceil(wait / 1000)));
      return { ok: false, headers: () => ({ ...this.#headers(state, Date.now()), "retry-after": retryAfter }), settle: () => undefined };
    }
    state.requests.take(1, now);
    state.tokens?.take(charged, now);
    return { ok: true, headers: () => this.#headers(state, Date.now()), settle: (n) => state.output?.take(n, Date.now()) };
  }

  #headers(state: KeyState, now: number): Record<string, string> {
    const { requests, tokens, output, config } = state;
    if (config.headers === "openai") {
      const h: Record<string, string> = {
        "x-ratelimit-limit-requests": String(requests.perMinute),
        "x-ratelimit-remaining-requests": String(Math.max(0, Math.floor(requests.level(now)))),
        "x-ratelimit-reset-requests": openAiDuration(requests.resetMs(now)),
      };
      if (tokens) {
        h["x-ratelimit-limit-tokens"] = String(tokens.perMinute);
        h["x-ratelimit-remaining-tokens"] = String(Math.max(0, Math.floor(tokens.level(now))));
        h["x-ratelimit-reset-tokens"] = openAiDuration(tokens.resetMs(now));
      }
      return h;
    }
    if (config.headers === "anthropic") {
      const h: Record<string, string> = {};
      const put = (name: string, w: Window) => {
        h[`anthropic-ratelimit-${name}-limit`] = String(w.perMinute);
        h[`anthropic-ratelimit-${name}-remaining`] = String(Math.max(0, Math.floor(w.level(now))));
        h[`anthropic-ratelimit-${name}-reset`] = new Date(now + w.resetMs(now)).toISOString().replace(/\.\d{3}Z$/, "Z");
      };
      put("requests", requests);
      if (tokens) put("input-tokens", tokens);
      if (output) put("output-tokens", output);
      const tighter = [tokens, output].filter((w): w is Window => w !== null).sort((a, b) => a.level(now) - b.level(now))[0];
      if (tighter) put("tokens", tighter);
      return h;
    }
    return {};
  }
}
