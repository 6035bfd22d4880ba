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

/** One attempt of one item, handed by the coordinator to a worker slot. */
export interface AttemptTask {
  spec: MapJobSpec;
  index: number;
  input: unknown;
  attempt: number;
  token: string; // identifies this dispatch; a report with another token is stale and ignored
  slot: number;
  problems: string[] | null; // what was wrong with the previous output, for the retry guidance
}

export type JobStatus = "queued" | "running" | "completed" | "cancelled" | "failed";

export const isTerminal = (status: string): boolean =>
  status === "completed" || status === "cancelled" || status === "failed";
