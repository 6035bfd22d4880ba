/** What a job's coordinator and workers need to run it, fixed at submission. */
export interface MapJobSpec {
  jobId: string;
  tenantId: string;
  type: "map";
  model: string;
  promptTemplate: string;
  outputSchema: Record<string, unknown> | null;
  systemPrompt: string | null;
  temperature: number | null;
  maxTokens: number | null;
  timeoutMs: number;
  maxRetries: number;
  concurrency: number;
  retryGuidance: string;
  maxOutputBytes: number;
  webhook: { url: string } | null;
}

export type ToolConfig =
  | { type: "http"; name: string; description: string; input_schema: Record<string, unknown>; url: string; read_only: boolean }
  | { type: "mcp"; url: string; allowed_tools: string[] | null };

export interface AgentJobSpec {
  jobId: string;
  tenantId: string;
  type: "agentic_map";
  model: string;
  promptTemplate: string;
  systemPrompt: string | null;
  temperature: number | null;
  maxTokens: number | null;
  timeoutMs: number; // per model call
  maxRetries: number; // per model call, for transient errors and timeouts
  concurrency: number;
  maxTurns: number;
  continuationMessage: string;
  completionMarker: string | null;
  readOnly: boolean;
  tools: ToolConfig[];
  maxContextTokens: number | null;
  maxTotalTokens: number | null;
  webhook: { url: string } | null;
}

export type JobSpec = MapJobSpec | AgentJobSpec;

/** One attempt of one item, handed by the coordinator to a worker slot (map) or a session (agentic). */
export interface AttemptTask {
  spec: JobSpec;
  index: number;
  input: unknown;
  attempt: number;
  token: string; // identifies this dispatch; a report with another token is stale and ignored
  slot: number;
  problems: string[] | null; // what was wrong with the previous output, for the retry guidance
  sessionId: string | null; // agentic jobs: the item's sub-session
}

export type MapTask = AttemptTask & { spec: MapJobSpec };

export type JobStatus = "queued" | "running" | "completed" | "cancelled" | "failed";

export const isTerminal = (status: string): boolean =>
  status === "completed" || status === "cancelled" || status === "failed";
