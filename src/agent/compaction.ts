/**
 * Compaction: when a session's prompt would exceed `max_context_tokens` (estimated at 4
 * characters a token), older turns are summarised by the model into one note. The first prompt
 * and the latest turns stay verbatim; the full history stays stored for audit.
 */
import type { ChatMessage } from "../llm/types";

export const CHARS_PER_TOKEN = 4; // a rough, provider-neutral estimate
export const KEEP_RECENT_MESSAGES = 4;
export const SUMMARY_REQUEST = "Summarize the conversation so far for your own later use";

export function estimateTokens(messages: ChatMessage[], system: string | null): number {
  let chars = system?.length ?? 0;
  for (const m of messages) {
    chars += m.content.length + 16;
    if (m.role === "assistant") for (const c of m.tool_calls ?? []) chars += c.name.length + c.arguments.length;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * Where the verbatim tail of `history` (indexes into it) starts, so that the tail never begins
 * with tool results cut off from the call that asked for them. Null if there is nothing to fold.
 */
export function compactionCut(history: ChatMessage[], from: number): number | null {
  let cut = history.length - KEEP_RECENT_MESSAGES;
  while (cut > from && history[cut]?.role === "tool") cut--;
  return cut > from ? cut : null;
}

export function transcript(messages: ChatMessage[]): string {
  return messages
    .map((m) => {
      if (m.role === "tool") return `[tool ${m.name} result${m.is_error ? " (error)" : ""}]\n${m.content}`;
      const calls = m.role === "assistant" && m.tool_calls?.length ? `\n[calls: ${m.tool_calls.map((c) => `${c.name}(${c.arguments})`).join(", ")}]` : "";
      return `[${m.role}]\n${m.content}${calls}`;
    })
    .join("\n\n");
}

export function summaryPrompt(previousSummary: string | null, folded: ChatMessage[]): string {
  const earlier = previousSummary ? `Earlier summary:\n${previousSummary}\n\n` : "";
  return `${SUMMARY_REQUEST}: the facts found, tool results that matter, decisions made and what remains to do. Be concise.\n\n${earlier}${transcript(folded)}`;
}

export const summaryNote = (summary: string): string => `Summary of the earlier conversation:\n${summary}`;
