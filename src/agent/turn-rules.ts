/**
 * The agent loop's decisions after each turn, in the contract's order: `natural` (the model
 * stopped with no tool call and no continuation is due), `doom_loop` (the same tool call — name
 * and arguments — three times in a row), `max_tokens` (the output limit was hit), `max_turns`,
 * then `budget` (the session's token budget is spent). Pure, so it is tested on its own.
 */
import type { FinishReason, ToolCall } from "../llm/types";

export type StopReason = "natural" | "doom_loop" | "max_tokens" | "max_turns" | "budget";

export const DOOM_LOOP_REPEATS = 3;

export interface LoopRules {
  maxTurns: number;
  continuationMessage: string;
  completionMarker: string | null;
  maxTotalTokens: number | null;
}

export interface DoomTracker {
  lastCall: string | null;
  repeats: number;
}

export type TurnDecision = { stop: StopReason } | { next: "tools" } | { next: "continue" };

export function callSignature(call: ToolCall): string {
  let args: unknown = call.arguments;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    // compare the raw text
  }
  return `${call.name}\u0000${JSON.stringify(args)}`;
}

/** Counts consecutive identical tool calls across turns. */
export function trackCalls(tracker: DoomTracker, calls: ToolCall[]): DoomTracker {
  let { lastCall, repeats } = tracker;
  for (const call of calls) {
    const sig = callSignature(call);
    repeats = sig === lastCall ? repeats + 1 : 1;
    lastCall = sig;
  }
  return { lastCall, repeats };
}

export function continuationDue(rules: LoopRules, text: string): boolean {
  if (rules.continuationMessage === "") return false;
  return !(rules.completionMarker !== null && text.includes(rules.completionMarker));
}

export function decideAfterTurn(
  rules: LoopRules,
  turn: { text: string; finishReason: FinishReason; toolCalls: ToolCall[] },
  state: { turns: number; totalTokens: number; doom: DoomTracker },
): TurnDecision {
  const calls = turn.toolCalls.length > 0;
  const continuing = !calls && continuationDue(rules, turn.text);
  if (!calls && turn.finishReason !== "length" && !continuing) return { stop: "natural" };
  if (calls && state.doom.repeats >= DOOM_LOOP_REPEATS) return { stop: "doom_loop" };
  if (turn.finishReason === "length") return { stop: "max_tokens" };
  if (state.turns >= rules.maxTurns) return { stop: "max_turns" };
  if (rules.maxTotalTokens !== null && state.totalTokens >= rules.maxTotalTokens) return { stop: "budget" };
  return calls ? { next: "tools" } : { next: "continue" };
}
