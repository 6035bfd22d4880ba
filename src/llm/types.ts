/** The provider-neutral shape of one model call and its answer. */
import type { RateObservation } from "../engine/pacing";
import type { ModelRef } from "./models";
import type { TokenLogprob } from "./logprobs";

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: string; // JSON text, as the model wrote it
}

export type ChatMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; name: string; content: string; is_error?: boolean };

export interface ModelRequest {
  model: ModelRef;
  system: string | null;
  messages: ChatMessage[];
  temperature: number | null;
  maxTokens: number | null;
  timeoutMs: number;
  /** Ask the provider for JSON matching this schema where it can; we validate regardless. */
  outputSchema?: Record<string, unknown> | null;
  tools?: ToolSpec[];
  /** Ask for the answer's token log-probabilities (OpenAI; ./logprobs.ts). */
  logprobs?: boolean;
  /** The shared prefix to mark for the provider's prompt cache (./prompt-cache.ts): the first user message's first `user` characters after the system prompt. */
  cacheBreak?: { user: number } | null;
  /** Ask for the embedding of the first user message instead of an answer (./embeddings.ts). */
  embedding?: { dimensions: number | null };
  /** OpenAI's `service_tier` to ask for (only `flex`: the default tier is asked by saying nothing). */
  serviceTier?: "flex";
}

/**
 * One call's tokens (or a sum of calls'). `input_tokens` counts every prompt token, those the
 * provider's prompt cache served (`cache_read_tokens`) and those written to it
 * (`cache_write_tokens`) included; the API shows the two as `cached_input_tokens` and
 * `cache_write_input_tokens`. `cost_usd` (./prices.ts): its dollars; null when a call spent
 * tokens on a model with no price; absent before it is priced.
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  cost_usd?: number | null;
}

export type FinishReason = "stop" | "length" | "tool_calls" | "other";

export interface ModelResponse {
  text: string;
  usage: Usage;
  finishReason: FinishReason;
  toolCalls: ToolCall[];
  /** The answer's rate-limit headers (src/llm/rate-headers.ts). */
  rate?: RateObservation;
  /** The answer's token log-probabilities, when asked for and given (./logprobs.ts). */
  logprobs?: TokenLogprob[] | null;
  /** The tier the provider says served the call (OpenAI's `service_tier`: `default`, `flex`, `priority`…). */
  serviceTier?: string;
  /** The provider's id of its answer and the model it names (a trace's `gen_ai.response.id` and `.model`). */
  id?: string;
  responseModel?: string;
}

export interface ProviderEndpoint {
  apiKey: string | null;
  baseUrl: string | null;
  /** The base URL is the tenant's: every request (and redirect) goes through the destination policy. */
  fetch?: typeof fetch;
}

/** A provider endpoint as plain data (it crosses RPC): `policy` when the base URL is the tenant's. */
export interface EndpointData {
  apiKey: string | null;
  baseUrl: string | null;
  policy: boolean;
}

/** A provider's reported token count, or 0 when it is missing or not a count. */
export const tokenCount = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) && n >= 0 ? Math.round(n) : 0);

const MAX_NAME_CHARS = 200; // an answer's id or model name as a trace keeps it

/** An answer's id and model name, where the provider gives them as short strings. */
export function answerNames(id: unknown, model: unknown): { id?: string; responseModel?: string } {
  const short = (v: unknown) => typeof v === "string" && v.length > 0 && v.length <= MAX_NAME_CHARS;
  return { ...(short(id) ? { id: id as string } : {}), ...(short(model) ? { responseModel: model as string } : {}) };
}

export const DEFAULT_MAX_TOKENS = 4096; // Anthropic requires max_tokens; a generous default for one item

/**
 * Why a model could not answer at all (contract v4, "Providers as they fail"): an outage (5xx or no
 * answer), no capacity (Anthropic's 529, OpenAI's 429 `resource_unavailable`), the model unknown or
 * retired (404 `model_not_found`), the credential's quota spent. An item whose model is
 * unavailable goes to the next model of its chain (`fallbacks`); a validation failure never does.
 */
export type Unavailable = "outage" | "capacity" | "model" | "quota";
