/**
 * Embedding calls (contract v4, "Embeddings, joins, embedding blocking"): one text in, one vector
 * out. OpenAI's `/v1/embeddings` (and any OpenAI-compatible server's), and the Workers AI binding's
 * embedding models (`@cf/baai/bge-…`); Anthropic has no embeddings API.
 *
 * The answer travels as a model answer whose text is the vector as JSON, so an embedding goes
 * through the same path as any call — the retry policy, the response cache, the provider's batch
 * API (OpenAI's runs `/v1/embeddings` lines), the validation (a list of finite numbers). Each
 * number is kept to 7 significant digits (the providers compute in 32-bit floats: nothing is
 * lost) and a vector has at most MAX_DIMENSIONS of them.
 */
import { ProviderFailure } from "./errors";
import { apiUrl, modelAnswer, postOpenAi } from "./openai-chat";
import type { AiBinding } from "./workers-ai";
import { tokenCount, type ModelRequest, type ModelResponse, type ProviderEndpoint } from "./types";

/** The most numbers one vector may hold (OpenAI's largest model has 3,072). */
export const MAX_DIMENSIONS = 8_192;

/** The output schema an embedding is held to. */
export const EMBEDDING_SCHEMA = { type: "array", items: { type: "number" }, minItems: 1, maxItems: MAX_DIMENSIONS };

/** The text an embedding call embeds: its first user message (the rendered template). */
function inputOf(request: ModelRequest): string {
  const first = request.messages.find((m) => m.role === "user");
  return first?.content ?? "";
}

/** A vector as the answer's text: 7 significant digits a number. */
export function vectorText(vector: number[]): string {
  return JSON.stringify(vector.map((x) => Number(x.toPrecision(7))));
}

/** The vector of an answer, or a permanent failure that says what is wrong with it. */
function checkedVector(value: unknown, where: string): number[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_DIMENSIONS || !value.every((x) => typeof x === "number" && Number.isFinite(x))) {
    throw new ProviderFailure(`${where} is not an embedding (a list of 1 to ${MAX_DIMENSIONS} finite numbers)`, "permanent");
  }
  return value as number[];
}

/** The body of an OpenAI embeddings request (a realtime call's, or a batch line's). */
export function embeddingParams(request: ModelRequest): Record<string, unknown> {
  const params: Record<string, unknown> = { model: request.model.name, input: inputOf(request), encoding_format: "float" };
  if (request.embedding?.dimensions) params.dimensions = request.embedding.dimensions;
  return params;
}

/** An OpenAI embeddings answer (`{"data": [{"embedding"}], "usage": {"prompt_tokens"}}`) as a model answer. */
export function readEmbedding(body: unknown): Omit<ModelResponse, "rate"> {
  const answer = body as { data?: { embedding?: unknown }[]; usage?: { prompt_tokens?: unknown } } | null;
  const vector = checkedVector(Array.isArray(answer?.data) ? answer.data[0]?.embedding : undefined, "the provider's answer");
  return { text: vectorText(vector), usage: { input_tokens: tokenCount(answer?.usage?.prompt_tokens), output_tokens: 0 }, finishReason: "stop", toolCalls: [] };
}

/** One embedding through OpenAI's (or a compatible server's) `/v1/embeddings`. */
export async function embedOpenAi(request: ModelRequest, endpoint: ProviderEndpoint): Promise<ModelResponse> {
  return modelAnswer(
    await postOpenAi(endpoint, apiUrl(endpoint.baseUrl, "embeddings"), embeddingParams(request), request.timeoutMs),
    "an embedding",
    readEmbedding,
  );
}

/** One embedding through the Workers AI binding (`{"text": [input]}` → `{"data": [[…]]}`); its prompt counted at 4 characters a token (the binding says none). */
export async function embedWorkersAi(request: ModelRequest, ai: AiBinding | undefined): Promise<ModelResponse> {
  if (!ai) throw new ProviderFailure('Workers AI is not bound: add `[ai] binding = "AI"` to wrangler.toml', "permanent");
  const input = inputOf(request);
  const output = (await Promise.race([
    ai.run(request.model.name, { text: [input] }),
    new Promise((_, reject) => setTimeout(() => reject(new ProviderFailure("Workers AI call timed out", "timeout")), request.timeoutMs)),
  ])) as { data?: unknown[] } | null;
  const vector = checkedVector(Array.isArray(output?.data) ? output.data[0] : undefined, "the Workers AI answer");
  return { text: vectorText(vector), usage: { input_tokens: Math.ceil(input.length / 4), output_tokens: 0 }, finishReason: "stop", toolCalls: [] };
}
