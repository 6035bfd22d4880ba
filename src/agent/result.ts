/** What one agentic sub-session produces; the coordinator adds `index` and `input`. */
import type { ErrorKind } from "../jobs/retry-policy";

export interface AgentItemResult {
  session_id: string;
  output_text: string;
  success: boolean;
  error: string | null;
  error_kind: ErrorKind | null;
  stop_reason: string;
  turns: number;
  token_usage: { input_tokens: number; output_tokens: number; total_tokens: number };
  intermediate_outputs: string[];
}

/** The result of an item whose sub-session was lost as many times as its retries allow. */
export function lostSessionResult(sessionId: string, error: string): AgentItemResult {
  return {
    session_id: sessionId,
    output_text: "",
    success: false,
    error,
    error_kind: "internal",
    stop_reason: "error",
    turns: 0,
    token_usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    intermediate_outputs: [],
  };
}
