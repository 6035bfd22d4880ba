/**
 * An agent session's tools: `http` tools (the arguments are POSTed as JSON to the tool's URL; the
 * response text is the result) and `mcp` servers (remote, over Streamable HTTP). With `read_only`
 * only tools marked read-only are offered (`read_only` on http tools, the `readOnlyHint`
 * annotation on MCP tools); a call to any other name is refused and reported to the model,
 * never executed.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { ToolConfig } from "../engine/types";
import { DestinationRefused, fetchWithPolicy, policyFetch } from "../net/destination";
import type { ToolCall, ToolSpec } from "../llm/types";

export const TOOL_TIMEOUT_MS = 30_000;
export const TOOL_RESULT_MAX_CHARS = 16_000; // about 4k tokens: a tool cannot flood the context

export interface ToolResult {
  content: string;
  isError: boolean;
}

interface Tool {
  spec: ToolSpec;
  readOnly: boolean;
  run(args: Record<string, unknown>): Promise<ToolResult>;
}

export interface Toolbox {
  offered: ToolSpec[];
  call(call: ToolCall): Promise<ToolResult>;
  close(): Promise<void>;
}

export function truncate(text: string): string {
  return text.length <= TOOL_RESULT_MAX_CHARS ? text : `${text.slice(0, TOOL_RESULT_MAX_CHARS)}\n…[truncated: ${text.length} characters in all]`;
}

function httpTool(config: Extract<ToolConfig, { type: "http" }>, env: object): Tool {
  return {
    spec: { name: config.name, description: config.description, input_schema: config.input_schema },
    readOnly: config.read_only,
    async run(args) {
      try {
        const res = await fetchWithPolicy(env, config.url, {
          method: "POST",
          headers: { "content-type": "application/json", "user-agent": "Fanout-Agent/1" },
          body: JSON.stringify(args),
          signal: AbortSignal.timeout(TOOL_TIMEOUT_MS),
        });
        const text = truncate(await res.text());
        return res.ok ? { content: text, isError: false } : { content: `HTTP ${res.status}: ${text}`, isError: true };
      } catch (err) {
        if (err instanceof DestinationRefused) return { content: `The tool was not called: ${err.message}`, isError: true };
        const timedOut = err instanceof Error && err.name === "TimeoutError";
        return { content: timedOut ? `the tool did not answer within ${TOOL_TIMEOUT_MS / 1000} s` : `the tool request failed: ${String(err)}`, isError: true };
      }
    },
  };
}

/**
 * The tools of an agent could not be loaded: no model was called. The message names the server and
 * the cause (a refused destination, a connection that failed, the status it answered); the item
 * fails with `error_kind: "tool_error"`.
 */
export class ToolLoadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ToolLoadError";
  }
}

/** What went wrong reaching an MCP server, in words: the status it answered, or the failure's own message. */
function causeOf(err: unknown): string {
  if (err instanceof DestinationRefused) return `the destination was refused: ${err.message}`;
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code === "number" && code >= 400) return `it answered HTTP ${code}${message ? ` (${message})` : ""}`;
  if (/internal error; reference|network connection lost|fetch failed|ECONNREFUSED|connect/i.test(message)) {
    return `the connection failed (refused, unreachable or a name that does not resolve): ${message}`;
  }
  return message;
}

async function mcpTools(config: Extract<ToolConfig, { type: "mcp" }>, clients: Client[], env: object): Promise<Tool[]> {
  // The SDK validates tools' structured output against their outputSchema with Ajv by default,
  // which compiles code: workerd forbids that. @cfworker/json-schema interprets the schema instead.
  const client = new Client({ name: "fanout", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const where = new URL(config.url);
  try {
    await client.connect(new StreamableHTTPClientTransport(where, { fetch: policyFetch(env) }));
  } catch (err) {
    throw new ToolLoadError(`Could not load the tools of the MCP server ${where.origin}${where.pathname}: ${causeOf(err)}`, { cause: err });
  }
  clients.push(client);
  try {
    return await listed(client, config);
  } catch (err) {
    throw new ToolLoadError(`Could not list the tools of the MCP server ${where.origin}${where.pathname}: ${causeOf(err)}`, { cause: err });
  }
}

async function listed(client: Client, config: Extract<ToolConfig, { type: "mcp" }>): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    for (const t of page.tools) {
      if (config.allowed_tools && !config.allowed_tools.includes(t.name)) continue;
      tools.push({
        spec: { name: t.name, description: t.description ?? "", input_schema: t.inputSchema as Record<string, unknown> },
        readOnly: t.annotations?.readOnlyHint === true,
        async run(args) {
          try {
            const result = await client.callTool({ name: t.name, arguments: args }, undefined, { timeout: TOOL_TIMEOUT_MS });
            const parts = Array.isArray(result.content) ? result.content : [];
            const text = parts.map((p: { type: string; text?: string }) => (p.type === "text" ? (p.text ?? "") : `[${p.type}]`)).join("\n");
            return { content: truncate(text), isError: result.isError === true };
          } catch (err) {
            return { content: `the MCP tool failed: ${String(err)}`, isError: true };
          }
        },
      });
    }
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** `env` carries the deployment's destination policy (../net/destination.ts), applied to every request and redirect. */
export async function openToolbox(configs: ToolConfig[], readOnly: boolean, env: object): Promise<Toolbox> {
  const clients: Client[] = [];
  const all = new Map<string, Tool>();
  for (const config of configs) {
    const tools = config.type === "http" ? [httpTool(config, env)] : await mcpTools(config, clients, env);
    for (const tool of tools) if (!all.has(tool.spec.name)) all.set(tool.spec.name, tool);
  }
  const offered = [...all.values()].filter((t) => !readOnly || t.readOnly);
  return {
    offered: offered.map((t) => t.spec),
    async call(call) {
      const tool = all.get(call.name);
      if (!tool) return { content: `There is no tool named "${call.name}".`, isError: true };
      if (readOnly && !tool.readOnly) {
        return { content: `The tool "${call.name}" is not available: this session is read-only.`, isError: true };
      }
      let args: unknown;
      try {
        args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
      } catch {
        return { content: "The arguments are not valid JSON.", isError: true };
      }
      if (typeof args !== "object" || args === null || Array.isArray(args)) {
        return { content: "The arguments must be a JSON object.", isError: true };
      }
      return tool.run(args as Record<string, unknown>);
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    },
  };
}
