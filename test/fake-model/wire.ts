/** OpenAI Chat Completions and Anthropic Messages response bodies, plain and as SSE streams. */
export interface Reply {
  text: string;
  json: unknown;
  toolCall?: { id: string; name: string; args: Record<string, unknown> };
  finish?: "length";
}

type Json = Record<string, unknown>;

/** A request's prompt tokens as the fake counts them, and the provider prompt cache's part of them (./prompt-cache.ts). */
export interface PromptCount {
  tokens: number;
  read: number;
  write: number;
}

const openAiUsage = (p: PromptCount, completion: number): Json => ({
  prompt_tokens: p.tokens,
  completion_tokens: completion,
  total_tokens: p.tokens + completion,
  prompt_tokens_details: { cached_tokens: p.read, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
});

/** Anthropic's `input_tokens` leaves out what the cache read or wrote. */
const anthropicUsage = (p: PromptCount, output: number): Json => ({
  input_tokens: Math.max(0, p.tokens - p.read - p.write),
  cache_creation_input_tokens: p.write,
  cache_read_input_tokens: p.read,
  output_tokens: output,
});

/** The fake's token count of a text: one per four characters (its usage, and what its rate limits charge). */
export const estimateTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));
const tokens = estimateTokens;

function forcedAnthropicTool(body: Json): string | null {
  const choice = body.tool_choice as Json | undefined;
  return choice?.type === "tool" && typeof choice.name === "string" ? choice.name : null;
}

/** `logprobs`: the answer's token log-probabilities when the request asked for them (./logprobs.ts). */
export function openAiBody(body: Json, prompt: PromptCount, reply: Reply, logprobs: Json | null = null): Json {
  if (reply.toolCall) {
    const call = reply.toolCall;
    return {
      id: `chatcmpl-${Date.now()}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            refusal: null,
            tool_calls: [{ id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.args) } }],
          },
          finish_reason: "tool_calls",
          logprobs: null,
        },
      ],
      usage: openAiUsage(prompt, 10),
      service_tier: servedTier(body),
    };
  }
  return {
    id: `chatcmpl-${Date.now()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message: { role: "assistant", content: reply.text, refusal: null }, finish_reason: reply.finish ?? "stop", logprobs }],
    usage: openAiUsage(prompt, tokens(reply.text)),
    service_tier: servedTier(body),
  };
}

/** The tier OpenAI says served a call: the flex tier when asked for it, else the project's default. */
export const servedTier = (body: Json): string => (body.service_tier === "flex" ? "flex" : "default");

export function openAiStream(body: Json, prompt: PromptCount, reply: Reply): string {
  const base = { id: `chatcmpl-${Date.now()}`, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: body.model };
  const pieces = reply.text.match(/[\s\S]{1,16}/g) ?? [""];
  const chunks = [
    { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
    ...pieces.map((p) => ({ ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    { ...base, choices: [], usage: openAiUsage(prompt, tokens(reply.text)) },
  ];
  return chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
}

export function anthropicBody(body: Json, prompt: PromptCount, reply: Reply): Json {
  if (reply.toolCall) {
    const call = reply.toolCall;
    return {
      id: `msg_${Date.now()}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content: [{ type: "tool_use", id: call.id, name: call.name, input: call.args }],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: anthropicUsage(prompt, 10),
    };
  }
  const tool = forcedAnthropicTool(body);
  const content =
    tool && reply.json !== null ? [{ type: "tool_use", id: `toolu_${Date.now()}`, name: tool, input: reply.json }] : [{ type: "text", text: reply.text }];
  return {
    id: `msg_${Date.now()}`,
    type: "message",
    role: "assistant",
    model: body.model,
    content,
    stop_reason: tool && reply.json !== null ? "tool_use" : reply.finish === "length" ? "max_tokens" : "end_turn",
    stop_sequence: null,
    usage: anthropicUsage(prompt, tokens(reply.text)),
  };
}

export function anthropicStream(body: Json, prompt: PromptCount, reply: Reply): string {
  const message = anthropicBody(body, prompt, reply);
  const events: [string, Json][] = [
    ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: anthropicUsage(prompt, 0) } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: reply.text } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: tokens(reply.text) } }],
    ["message_stop", { type: "message_stop" }],
  ];
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}
