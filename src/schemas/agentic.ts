/** Request and result schemas of POST /v1/agentic-map and GET /v1/sessions/{id}. */
import { z } from "@hono/zod-openapi";
import { CostUsdSchema, ErrorKindSchema } from "./map";
import { maxWaitField, sharedJobFields } from "../operators/base-fields";
import { HttpUrlSchema, TimeoutSecsSchema } from "./common";

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/; // what both providers accept as a function/tool name

export const HttpToolSchema = z
  .strictObject({
    type: z.literal("http"),
    name: z.string().regex(TOOL_NAME, "1–64 letters, digits, _ or -"),
    description: z.string().max(2_000).default(""),
    input_schema: z.record(z.string(), z.unknown()).default({ type: "object", properties: {} }),
    url: HttpUrlSchema,
    read_only: z.boolean().default(false),
  })
  .openapi("HttpTool", { description: "The arguments are POSTed as JSON to `url`; the response text is the tool result." });

export const McpToolSchema = z
  .strictObject({
    type: z.literal("mcp"),
    url: HttpUrlSchema,
    allowed_tools: z.array(z.string().max(64)).max(256).nullish(),
  })
  .openapi("McpServer", { description: "A remote MCP server over Streamable HTTP; `allowed_tools` limits which of its tools are offered." });

export const ToolSchema = z.discriminatedUnion("type", [HttpToolSchema, McpToolSchema]);

export const MAX_SUBTASK_DEPTH = 5;

export const SubtasksSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    max_depth: z.number().int().min(1).max(MAX_SUBTASK_DEPTH).default(MAX_SUBTASK_DEPTH),
    max_total_tokens: z.number().int().positive().nullish().openapi({ description: "The whole chain's tokens (the item and every subtask under it)" }),
    timeout_secs: z.number().int().min(1).max(3600).default(900).openapi({ description: "The whole chain's time, from the item's first turn" }),
  })
  .openapi("Subtasks", { description: "Offer the agent a `spawn_subtask` tool: a child sub-session with the same model and tools" });

export const AgenticMapRequestSchema = z
  .strictObject({
    inputs: z.array(z.unknown()).min(1, "inputs must hold at least one item"),
    agent_prompt_template: z.string().min(1).openapi({ example: "Research {{ item.company }} and summarise its pricing." }),
    ...sharedJobFields,
    temperature: z.number().min(0).max(2).nullish(),
    max_tokens: z.number().int().positive().nullish().openapi({ description: "Output limit of each model call" }),
    max_turns: z.number().int().min(1).max(100).default(20),
    continuation_message: z.string().default(""),
    completion_marker: z.string().min(1).nullish(),
    read_only: z.boolean().default(false),
    tools: z.array(ToolSchema).max(64).default([]),
    concurrency: z.number().int().min(1).max(32).default(4),
    timeout_secs: TimeoutSecsSchema.default(60).openapi({ description: "Per model call" }),
    max_retries: z.number().int().min(0).max(10).default(3).openapi({ description: "Per model call, for transient errors and timeouts" }),
    ...maxWaitField,
    max_context_tokens: z.number().int().min(256).nullish().openapi({ description: "Compact older turns into a summary above this estimated prompt size" }),
    max_total_tokens: z
      .number()
      .int()
      .positive()
      .nullish()
      .openapi({ description: "Per-item token budget (the item's subtasks included); stop reason `budget`" }),
    subtasks: SubtasksSchema.nullish(),
  })
  .openapi("AgenticMapRequest");

export type AgenticMapRequest = z.infer<typeof AgenticMapRequestSchema>;

export const AgentMapResultSchema = z
  .object({
    index: z.number().int(),
    input: z.unknown(),
    session_id: z.string(),
    output_text: z.string(),
    success: z.boolean(),
    error: z.string().nullable(),
    error_kind: ErrorKindSchema,
    stop_reason: z.enum(["natural", "doom_loop", "max_tokens", "max_turns", "budget", "error"]),
    turns: z.number().int(),
    token_usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() }),
    intermediate_outputs: z.array(z.string()),
    cost_usd: CostUsdSchema.optional().openapi({ description: "The sub-session's calls in dollars (job results; null: the model has no price)" }),
  })
  .openapi("AgentMapResult");

export const SessionMessageSchema = z
  .object({
    role: z.enum(["user", "assistant", "tool"]),
    content: z.string(),
    tool_calls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })).optional(),
    tool_call_id: z.string().optional(),
    name: z.string().optional(),
    is_error: z.boolean().optional(),
  })
  .openapi("SessionMessage");

export const SessionSummarySchema = z
  .object({
    session_id: z.string(),
    job_id: z.string(),
    index: z.number().int(),
    parent_session_id: z.string().nullable().openapi({ description: "A subtask's parent session (null for an item's own)" }),
    depth: z.number().int().openapi({ description: "0 for an item's session, 1 for its subtasks, …" }),
    status: z.enum(["running", "completed", "failed"]),
    stop_reason: z.string().nullable(),
    turns: z.number().int(),
    compactions: z.number().int().openapi({ description: "How often older turns were folded into a summary" }),
    token_usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() }),
  })
  .openapi("SessionSummary");

export const SessionSchema = SessionSummarySchema.extend({
  children: z.array(z.string()).openapi({ description: "The sessions of its subtasks, in the order they started" }),
  messages: z.array(SessionMessageSchema),
}).openapi("Session");
