/** What one agentic sub-session produces; it reports these as `details`, and the operator adds `index` and `input`. */
import type { ErrorKind } from "../engine/types";

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
