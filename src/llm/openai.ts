/** Chat Completions (OpenAI and any compatible server) through the official SDK, retries off. */
import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import type { ChatMessage, FinishReason, ModelRequest, ModelResponse, ProviderEndpoint } from "./types";

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

function clientFor(endpoint: ProviderEndpoint): OpenAI {
  const key = `${endpoint.apiKey}\u0000${endpoint.baseUrl}`;
  let client = clients.get(key);
  if (!client) {
    client = new OpenAI({
      apiKey: endpoint.apiKey ?? "unused", // local OpenAI-compatible servers often take no key
      baseURL: endpoint.baseUrl ?? undefined,
      maxRetries: 0, // our retry policy is the only one
    });
    clients.set(key, client);
  }
  return client;
}

export async function callOpenAi(
  request: ModelRequest,
  endpoint: ProviderEndpoint,
  options: { nativeJson: boolean },
): Promise<ModelResponse> {
  const client = clientFor(endpoint);
  const params: ChatCompletionCreateParamsNonStreaming = {
    model: request.model.name,
    messages: toOpenAiMessages(request.system, request.messages),
  };
  if (request.temperature !== null) params.temperature = request.temperature;
  if (request.maxTokens !== null) params.max_completion_tokens = request.maxTokens;
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
  const completion = await client.chat.completions.create(params, { timeout: request.timeoutMs });
  const choice = completion.choices[0];
  const toolCalls = (choice?.message.tool_calls ?? []).flatMap((c) =>
    c.type === "function" ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [],
  );
  return {
    text: choice?.message.content ?? "",
    usage: {
      input_tokens: completion.usage?.prompt_tokens ?? 0,
      output_tokens: completion.usage?.completion_tokens ?? 0,
    },
    finishReason: finishReason(choice?.finish_reason),
    toolCalls,
  };
}
