/**
 * Token estimates: one function serves the dry run, the 422 budget check and the reservation a
 * call makes before it starts. Without a tokenizer for every provider, a prompt counts
 * ceil(characters / 4) tokens (OpenAI's rule of thumb for English); the output counts its bound,
 * `max_tokens`, or DEFAULT_MAX_TOKENS when the request sets none (with a budget every call is
 * sent with that bound, so a reservation covers the output).
 */
export const DEFAULT_MAX_TOKENS = 1_024; // the contract's bound for calls without max_tokens
export const ESTIMATE_METHOD = "chars/4";
const CHARS_PER_TOKEN = 4;

export function promptTokens(prompt: string, system: string | null): number {
  return Math.ceil((prompt.length + (system?.length ?? 0)) / CHARS_PER_TOKEN);
}

export function outputBound(maxTokens: number | null): number {
  return maxTokens ?? DEFAULT_MAX_TOKENS;
}
