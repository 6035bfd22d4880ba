/**
 * The providers' prompt caches, per API key, as their usage reports them:
 * - OpenAI caches by itself: a prompt of 1,024 tokens and more has its prefix cached in 128-token
 *   steps; a later prompt that starts with a cached prefix reports those tokens as
 *   `prompt_tokens_details.cached_tokens` (inside `prompt_tokens`). No writes are billed.
 * - Anthropic caches only what a request marks with `cache_control`: the prefix up to the end of
 *   the marked block (system blocks first, then the messages), when it reaches the model's minimum
 *   (1,024 tokens; 2,048 / 4,096 for the models Anthropic lists). The first request writes it
 *   (`cache_creation_input_tokens`), later ones read it (`cache_read_input_tokens`) for five
 *   minutes after their last use; `input_tokens` is what is left.
 * The fake counts a request's prompt as its system text and its last user message (one token per
 * four characters, ./wire.ts); cached tokens are whole tokens of a prefix, never more than that.
 */

type Json = Record<string, unknown>;

const TTL_MS = 5 * 60_000; // both providers: at least five minutes after the last use
const OPENAI_MIN_CHARS = 4 * 1024; // 1,024 tokens at four characters a token
const OPENAI_STEP_CHARS = 4 * 128;

/** Anthropic's minimum cacheable prefix by model, as its docs list it (the provider's rule; Fanout keeps its own copy). */
function anthropicMinimum(model: string): number {
  if (/opus-4-[56]|haiku-4-5/.test(model)) return 4096;
  return /sonnet-4-6|haiku-3|3-5-haiku/.test(model) ? 2048 : 1024;
}

export interface CacheUse {
  read: number;
  write: number;
}

const NONE: CacheUse = { read: 0, write: 0 };

/** The text of a `system` field: a string or a list of text blocks. */
export function systemText(system: unknown): string {
  if (typeof system === "string") return system;
  return Array.isArray(system) ? (system as Json[]).map((b) => (typeof b.text === "string" ? b.text : "")).join("") : "";
}

/** An Anthropic request's marked prefix (system, then the first user message's blocks up to the marked one), or null when nothing is marked. */
function markedPrefix(body: Json): string | null {
  let text = "";
  for (const block of Array.isArray(body.system) ? (body.system as Json[]) : []) {
    text += typeof block.text === "string" ? block.text : "";
    if (block.cache_control) return text;
  }
  text = systemText(body.system);
  const first = Array.isArray(body.messages) ? (body.messages[0] as Json | undefined) : undefined;
  for (const block of Array.isArray(first?.content) ? (first.content as Json[]) : []) {
    text += typeof block.text === "string" ? block.text : "";
    if (block.cache_control) return text;
  }
  return null;
}

export class FakePromptCache {
  readonly #entries = new Map<string, number>(); // key + prefix → expires at

  #hit(id: string, now: number): boolean {
    const expires = this.#entries.get(id);
    if (expires === undefined || expires < now) return false;
    this.#entries.set(id, now + TTL_MS);
    return true;
  }

  /** OpenAI: the cached tokens of `prompt` (system text + the last user message); its steps are cached from now on. */
  openai(key: string, prompt: string, now = Date.now()): CacheUse {
    let read = 0;
    for (let end = OPENAI_MIN_CHARS; end <= prompt.length; end += OPENAI_STEP_CHARS) {
      const id = `openai\u0000${key}\u0000${prompt.slice(0, end)}`;
      if (this.#hit(id, now)) read = end / 4;
      else this.#entries.set(id, now + TTL_MS);
    }
    return { read, write: 0 };
  }

  /** Anthropic: what the marked prefix reads or writes. */
  anthropic(key: string, body: Json, now = Date.now()): CacheUse {
    const prefix = markedPrefix(body);
    if (prefix === null) return NONE;
    const tokens = Math.floor(prefix.length / 4);
    if (tokens < anthropicMinimum(String(body.model))) return NONE;
    const id = `anthropic\u0000${key}\u0000${String(body.model)}\u0000${prefix}`;
    if (this.#hit(id, now)) return { read: tokens, write: 0 };
    this.#entries.set(id, now + TTL_MS);
    return { read: 0, write: tokens };
  }
}
