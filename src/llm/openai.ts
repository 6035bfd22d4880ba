/**
 * Chat Completions (OpenAI and any compatible server): a realtime call over `fetch` with the SDK's
 * failures (./openai-chat.ts); the batch API's calls through the official SDK, retries off.
 */
import OpenAI from "openai";
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from "openai/resources/chat/completions";
import { ProviderFailure } from "./errors";
import { modelAnswer, postChatCompletion } from "./openai-chat";
import { noteLogprobsRefusal, readLogprobs, refusesLogprobs } from "./logprobs";
import {
  answerNames,
  tokenCount,
  type ChatMessage,
  type FinishReason,
  type ModelRequest,
  type ModelResponse,
  type ProviderEndpoint,
  type Usage,
} from "./types";

function toOpenAiMessages(system: string | null, messages: ChatMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = system ? [{ role: "system", content: system }] : [];
  for (const m of messages) {
    if (m.role === "user") out.push({ role: "user", content: m.content });
    else if (m.role === "tool") out.push({ role: "tool", tool_call_id: m.tool_call_id, content: m.content });
    else if (m.tool_calls?.length) {
      out.push({
        role: "assistant",
        content: m.content || null,
        tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
      });
    } else out.push({ role: "assistant", content: m.content });
  }
  return out;
}

function finishReason(reason: string | null | undefined): FinishReason {
  if (reason === "stop") return "stop";
  if (reason === "length") return "length";
  if (reason === "tool_calls" || reason === "function_call") return "tool_calls";
  return "other";
}

const clients = new Map<string, OpenAI>(); // one per endpoint per isolate: building a client is not free

export function clientFor(endpoint: ProviderEndpoint): OpenAI {
  const key = `${endpoint.apiKey}\u0000${endpoint.baseUrl}\u0000${endpoint.fetch ? "guarded" : "trusted"}`;
  let client = clients.get(key);
  if (!client) {
    client = new OpenAI({
      apiKey: endpoint.apiKey ?? "unused", // local OpenAI-compatible servers often take no key
      baseURL: endpoint.baseUrl ?? undefined,
      maxRetries: 0, // our retry policy is the only one
      fetch: endpoint.fetch,
    });
    clients.set(key, client);
  }
  return client;
}

/** The Chat Completions body of a request (a realtime call's, or a batch line's). */
export function chatParams(request: ModelRequest, options: { nativeJson: boolean }): ChatCompletionCreateParamsNonStreaming {
  const params: ChatCompletionCreateParamsNonStreaming = {
    model: request.model.name,
    messages: toOpenAiMessages(request.system, request.messages),
  };
  if (request.temperature !== null) params.temperature = request.temperature;
  if (request.maxTokens !== null) params.max_completion_tokens = request.maxTokens;
  if (request.serviceTier) params.service_tier = request.serviceTier;
  if (request.logprobs) {
    params.logprobs = true;
    params.top_logprobs = TOP_LOGPROBS;
  }
  if (request.tools?.length) {
    params.tools = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }));
  } else if (request.outputSchema && options.nativeJson) {
    params.response_format = {
      type: "json_schema",
      json_schema: { name: "output", schema: request.outputSchema, strict: false },
    };
  }
  return params;
}

const MAX_TIER_CHARS = 32;
// a service tier's name as a result keeps it: OpenAI's are `default`, `flex`, `priority`, `scale`

/** Alternatives asked for at each token: enough for a boolean's other value. */
const TOP_LOGPROBS = 5;

/** One realtime call; asked for logprobs, a model that refuses them is asked again without (and remembered: ./logprobs.ts). */
export async function callOpenAi(request: ModelRequest, endpoint: ProviderEndpoint, options: { nativeJson: boolean }): Promise<ModelResponse> {
  const ask = request.logprobs === true && !refusesLogprobs(request.model.name);
  try {
    return await completionOf({ ...request, logprobs: ask }, endpoint, options);
  } catch (err) {
    if (ask && noteLogprobsRefusal(request.model.name, err)) return completionOf({ ...request, logprobs: false }, endpoint, options);
    throw err;
  }
}

async function completionOf(request: ModelRequest, endpoint: ProviderEndpoint, options: { nativeJson: boolean }): Promise<ModelResponse> {
  return modelAnswer(await postChatCompletion(endpoint, chatParams(request, options), request.timeoutMs), "a chat completion", readCompletion);
}

/** OpenAI counts cached prompt tokens inside `prompt_tokens` (`prompt_tokens_details.cached_tokens` of them); it bills no cache writes. */
function openAiUsage(usage: ChatCompletion["usage"] | undefined): Usage {
  const read = tokenCount(usage?.prompt_tokens_details?.cached_tokens);
  return {
    input_tokens: tokenCount(usage?.prompt_tokens),
    output_tokens: tokenCount(usage?.completion_tokens),
    ...(read > 0 ? { cache_read_tokens: read } : {}),
  };
}

/** A 200 of the wrong shape is a permanent failure with a clear message, never a TypeError retried as a network error. */
export function readCompletion(completion: unknown): ModelResponse {
  const body = completion as Partial<ChatCompletion> | null;
  const choice = Array.isArray(body?.choices) ? body.choices[0] : undefined;
  if (!choice || typeof choice.message !== "object" || choice.message === null) {
    throw new ProviderFailure("the provider's answer is not a chat completion (it has no choices[0].message)", "permanent");
  }
  const content: unknown = choice.message.content;
  if (content !== null && content !== undefined && typeof content !== "string") {
    throw new ProviderFailure("the provider's answer is not a chat completion (message.content is not text)", "permanent");
  }
  const calls: unknown = choice.message.tool_calls ?? [];
  if (!Array.isArray(calls)) throw new ProviderFailure("the provider's answer has malformed tool_calls", "permanent");
  const toolCalls = (calls as ChatCompletionMessageToolCall[]).flatMap((c) =>
    c?.type === "function" && typeof c.function?.name === "string"
      ? [{ id: String(c.id), name: c.function.name, arguments: String(c.function.arguments ?? "") }]
      : [],
  );
  const usage = body?.usage;
  const logprobs = readLogprobs(choice.logprobs);
  const tier: unknown = body?.service_tier;
  return {
    text: typeof content === "string" ? content : "",
    usage: openAiUsage(usage),
    finishReason: finishReason(choice.finish_reason),
    toolCalls,
    ...(logprobs ? { logprobs } : {}),
    // The tier that served it, as the provider names it (bounded: a compatible server may say anything).
    ...(typeof tier === "string" && tier.length > 0 && tier.length <= MAX_TIER_CHARS ? { serviceTier: tier } : {}),
    ...answerNames(body?.id, body?.model),
  };
}
