/**
 * The Messages API through the official SDK, retries off. `temperature` is not sent: the API
 * version the SDK sends (2026-10-21) refuses temperature/top_p/top_k with a 400, and the SDK's
 * request type no longer carries them (the README says so). Structured output is requested with a
 * forced tool whose input_schema is the output schema; its input is returned as JSON text.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { ContentBlockParam, Message, MessageCreateParamsNonStreaming, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { ProviderFailure } from "./errors";
import { fromHeaders, rateObservation } from "./rate-headers";
import { answerNames, DEFAULT_MAX_TOKENS, tokenCount } from "./types";
import type { ChatMessage, FinishReason, ModelRequest, ModelResponse, ProviderEndpoint, Usage } from "./types";

const OUTPUT_TOOL = "output";

function toAnthropicMessages(messages: ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const m of messages) {
    if (m.role === "user") out.push({ role: "user", content: m.content });
    else if (m.role === "assistant") {
      const content: ContentBlockParam[] = [];
      if (m.content) content.push({ type: "text", text: m.content });
      for (const call of m.tool_calls ?? []) {
        content.push({ type: "tool_use", id: call.id, name: call.name, input: safeParse(call.arguments) });
      }
      out.push({ role: "assistant", content });
    } else {
      // Tool results travel in a user turn; consecutive results share one turn.
      const block = { type: "tool_result" as const, tool_use_id: m.tool_call_id, content: m.content, is_error: m.is_error };
      const last = out.at(-1);
      if (last?.role === "user" && Array.isArray(last.content)) last.content.push(block);
      else out.push({ role: "user", content: [block] });
    }
  }
  return out;
}

const EPHEMERAL = { type: "ephemeral" } as const;

/** `cache_control` at the end of the shared prefix: the first user message's first `user` characters, else the system prompt. */
function markCacheBreak(params: MessageCreateParamsNonStreaming, user: number): void {
  const first = params.messages[0];
  if (user > 0 && first?.role === "user" && typeof first.content === "string" && first.content.length >= user) {
    const text = first.content;
    const rest = text.slice(user);
    first.content = [{ type: "text", text: text.slice(0, user), cache_control: EPHEMERAL }, ...(rest ? [{ type: "text" as const, text: rest }] : [])];
  } else if (typeof params.system === "string") {
    params.system = [{ type: "text", text: params.system, cache_control: EPHEMERAL }];
  }
}

function safeParse(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function finishReason(reason: string | null): FinishReason {
  if (reason === "end_turn" || reason === "stop_sequence") return "stop";
  if (reason === "max_tokens") return "length";
  if (reason === "tool_use") return "tool_calls";
  return "other";
}

/** Anthropic's `input_tokens` leaves out the prompt cache's tokens: Fanout's counts every prompt token, the cached ones as parts. */
export function anthropicUsage(usage: Partial<Message["usage"]> | null | undefined): Usage {
  const read = tokenCount(usage?.cache_read_input_tokens);
  const write = tokenCount(usage?.cache_creation_input_tokens);
  return {
    input_tokens: tokenCount(usage?.input_tokens) + read + write,
    output_tokens: tokenCount(usage?.output_tokens),
    ...(read > 0 ? { cache_read_tokens: read } : {}),
    ...(write > 0 ? { cache_write_tokens: write } : {}),
  };
}

const clients = new Map<string, Anthropic>(); // one per endpoint per isolate: building a client is not free

export function clientFor(endpoint: ProviderEndpoint): Anthropic {
  const key = `${endpoint.apiKey}\u0000${endpoint.baseUrl}\u0000${endpoint.fetch ? "guarded" : "trusted"}`;
  let client = clients.get(key);
  if (!client) {
    client = new Anthropic({ apiKey: endpoint.apiKey, baseURL: endpoint.baseUrl ?? undefined, maxRetries: 0, fetch: endpoint.fetch }); // our retries only
    clients.set(key, client);
  }
  return client;
}

/** The Messages body of a request (a realtime call's, or a batch line's `params`), and whether its answer comes as the forced output tool's input. */
export function messageParams(request: ModelRequest): { params: MessageCreateParamsNonStreaming; forcedTool: boolean } {
  const params: MessageCreateParamsNonStreaming = {
    model: request.model.name,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    messages: toAnthropicMessages(request.messages),
  };
  if (request.system) params.system = request.system;
  if (request.cacheBreak) markCacheBreak(params, request.cacheBreak.user);
  const schema = request.outputSchema;
  const forcedTool = Boolean(!request.tools?.length && schema && schema.type === "object");
  if (request.tools?.length) {
    params.tools = request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: { ...t.input_schema, type: "object" },
    }));
  } else if (forcedTool && schema) {
    params.tools = [{ name: OUTPUT_TOOL, description: "Return the answer as this tool's input.", input_schema: { ...schema, type: "object" } }];
    params.tool_choice = { type: "tool", name: OUTPUT_TOOL };
  }
  return { params, forcedTool };
}

/** A Messages API message as the provider-neutral answer (a 200 of another shape is a permanent failure). */
export function readMessage(message: Message, forcedTool: boolean): Omit<ModelResponse, "rate"> {
  if (!Array.isArray((message as { content?: unknown } | null)?.content)) {
    throw new ProviderFailure("the provider's answer is not a Messages API message (it has no content list)", "permanent");
  }
  let text = "";
  const toolCalls = [];
  for (const block of message.content) {
    if (block.type === "text") text += block.text;
    else if (block.type === "tool_use") {
      if (forcedTool && block.name === OUTPUT_TOOL) text = JSON.stringify(block.input);
      else toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
    }
  }
  return {
    text,
    usage: anthropicUsage(message.usage),
    finishReason: forcedTool && message.stop_reason === "tool_use" ? "stop" : finishReason(message.stop_reason),
    toolCalls,
    ...answerNames(message.id, message.model),
  };
}

export async function callAnthropic(request: ModelRequest, endpoint: ProviderEndpoint): Promise<ModelResponse> {
  const { params, forcedTool } = messageParams(request);
  const { data: message, response } = await clientFor(endpoint).messages.create(params, { timeout: request.timeoutMs }).withResponse();
  const rate = rateObservation(fromHeaders(response.headers), "anthropic");
  return { ...readMessage(message, forcedTool), ...(rate ? { rate } : {}) };
}
