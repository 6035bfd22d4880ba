/** Workers AI through the AI binding (`[ai] binding = "AI"` in wrangler.toml). */
import { ProviderFailure } from "./errors";
import type { ModelRequest, ModelResponse } from "./types";

export interface AiBinding {
  run(model: string, inputs: Record<string, unknown>, options?: Record<string, unknown>): Promise<unknown>;
}

interface AiTextOutput {
  response?: unknown;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  tool_calls?: { name: string; arguments: unknown }[];
}

export async function callWorkersAi(request: ModelRequest, ai: AiBinding | undefined): Promise<ModelResponse> {
  if (!ai) {
    throw new ProviderFailure('Workers AI is not bound: add `[ai] binding = "AI"` to wrangler.toml', "permanent");
  }
  const messages: { role: string; content: string }[] = request.system ? [{ role: "system", content: request.system }] : [];
  for (const m of request.messages) {
    if (m.role === "tool") messages.push({ role: "tool", content: m.content });
    else messages.push({ role: m.role, content: m.content });
  }
  const inputs: Record<string, unknown> = { messages };
  if (request.maxTokens !== null) inputs.max_tokens = request.maxTokens;
  if (request.temperature !== null) inputs.temperature = request.temperature;
  if (request.outputSchema) inputs.response_format = { type: "json_schema", json_schema: request.outputSchema };
  if (request.tools?.length) {
    inputs.tools = request.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.input_schema }));
  }
  const output = (await Promise.race([
    ai.run(request.model.name, inputs),
    new Promise((_, reject) => setTimeout(() => reject(new ProviderFailure("Workers AI call timed out", "timeout")), request.timeoutMs)),
  ])) as AiTextOutput;
  const response = output.response;
  const toolCalls = (output.tool_calls ?? []).map((c, i) => ({
    id: `call_${i}`,
    name: c.name,
    arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {}),
  }));
  return {
    text: typeof response === "string" ? response : response === undefined ? "" : JSON.stringify(response),
    usage: { input_tokens: output.usage?.prompt_tokens ?? 0, output_tokens: output.usage?.completion_tokens ?? 0 },
    finishReason: toolCalls.length ? "tool_calls" : "stop",
    toolCalls,
  };
}
