/** A call's `max_tokens` as sent: with a token budget every call has an output bound, so a reservation covers it. */
import { DEFAULT_MAX_TOKENS } from "../engine/estimate";

export function boundedMaxTokens(maxTokens: number | null | undefined, body: { token_budget?: unknown }): number | null {
  return maxTokens ?? (body.token_budget ? DEFAULT_MAX_TOKENS : null);
}
