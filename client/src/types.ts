/** The API's shapes, in camelCase on the way in and as the API sends them on the way out. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export interface MapResult<T = unknown> {
  index: number;
  input: unknown;
  output: T | null;
  success: boolean;
  error: string | null;
  error_kind: "timeout" | "validation" | "llm_error" | "schema_error" | "internal" | null;
  attempts: number;
  usage: Usage;
}

export interface AgentMapResult {
  index: number;
  input: unknown;
  session_id: string;
  output_text: string;
  success: boolean;
  error: string | null;
  error_kind: "timeout" | "validation" | "llm_error" | "schema_error" | "internal" | null;
  stop_reason: string;
  turns: number;
  token_usage: Usage & { total_tokens: number };
  intermediate_outputs: string[];
}

export interface Job {
  id: string;
  type: "map" | "agentic_map";
  status: "queued" | "running" | "completed" | "cancelled" | "failed";
  model: string;
  total: number;
  completed: number;
  succeeded: number;
  failed: number;
  total_attempts: number;
  usage: Usage;
  metadata: Record<string, unknown>;
  created_at: string;
  completed_at: string | null;
}

export interface Batch<R> {
  jobId: string;
  successes: R[];
  failures: R[];
  total: number;
  totalAttempts: number;
}

export interface MapStartedEvent {
  job_id: string;
  total: number;
  model: string;
  type?: "agentic";
}

export interface MapItemCompletedEvent<R> {
  job_id: string;
  completed: number;
  total: number;
  success: boolean;
  result: R;
}

export interface MapCompletedEvent {
  job_id: string;
  status: Job["status"];
  total: number;
  completed: number;
  succeeded: number;
  failed: number;
  total_attempts: number;
  usage: Usage;
}

export interface EventHandlers<R> {
  MAP_STARTED?: (data: MapStartedEvent) => void;
  MAP_ITEM_COMPLETED?: (data: MapItemCompletedEvent<R>) => void;
  MAP_COMPLETED?: (data: MapCompletedEvent) => void;
}

export interface Webhook {
  url: string;
  secret?: string;
}

interface CommonOptions<R> {
  inputs: unknown[];
  model: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  timeoutSecs?: number;
  maxRetries?: number;
  concurrency?: number;
  webhook?: Webhook;
  metadata?: Record<string, unknown>;
  idempotencyKey?: string;
  onEvent?: EventHandlers<R>;
}

export interface MapOptions<S, R> extends CommonOptions<R> {
  promptTemplate: string;
  /** A zod schema (outputs are then typed and parsed by it) or a JSON Schema object. */
  outputSchema?: S;
  retryGuidance?: string;
}

export type HttpTool = { type: "http"; name: string; description?: string; inputSchema?: Record<string, unknown>; url: string; readOnly?: boolean };
export type McpTool = { type: "mcp"; url: string; allowedTools?: string[] };

export interface AgenticMapOptions extends CommonOptions<AgentMapResult> {
  agentPromptTemplate: string;
  maxTurns?: number;
  continuationMessage?: string;
  completionMarker?: string;
  readOnly?: boolean;
  tools?: (HttpTool | McpTool)[];
  maxContextTokens?: number;
  maxTotalTokens?: number;
}
