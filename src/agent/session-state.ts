/**
 * An agentic sub-session's loop state, saved after every turn (the AgentSession object's `state`
 * key), and the pure rules over it: a new session's state, its result, the tokens not reported
 * yet, and whether a child is past its chain's limits.
 */
import type { AgentItemResult } from "./result";
import type { DoomTracker } from "./turn-rules";
import type { ErrorKind } from "../engine/types";
import type { AgentSpec, SubtaskSpawn, TaskRef } from "../engine/types";
import type { ToolCall } from "../llm/types";

export interface SessionState {
  sessionId: string;
  turns: number;
  inputTokens: number;
  outputTokens: number;
  intermediate: string[];
  compactions: number;
  summary: string | null;
  tailFrom: number; // context = message 0 + summary note + messages[tailFrom…]
  doom: DoomTracker;
  callAttempts: number; // attempts of the model call now under way (rate-limit answers not counted)
  /** Rate-limit answers to this session's calls, and since when its current call is throttled in a row (absent in states stored before them). */
  throttles?: number;
  throttledSince?: number | null;
  done: AgentItemResult | null;
  // Subtasks (absent in states stored before them: read with `chainOf`).
  chain?: Chain;
  /** Its model calls and tool calls since its last report, for the job's trace (at most MAX_SESSION_SPANS; absent: none yet). */
  spans?: SessionSpan[];
}

/** A sub-session's model call or tool call as its job's trace shows it (durable-objects/coordinator/tracer.ts). */
export type SessionSpan =
  | { kind: "chat"; start: number; end: number; input: number; output: number; finish?: string; id?: string; model?: string; error?: string }
  | { kind: "tool"; name: string; start: number; end: number; error?: boolean };

/** The spans a session keeps between two reports: past it the newest are not kept (a session runs ≤ max_turns turns). */
export const MAX_SESSION_SPANS = 256;

/** Keeps a span for the next report (bounded). */
export function keepSpan(state: SessionState, span: SessionSpan): void {
  const spans = (state.spans ??= []);
  if (spans.length < MAX_SESSION_SPANS) spans.push(span);
}

/** The spans kept since the last report, taken (they go with this report). */
export function takeSpans(state: SessionState): SessionSpan[] {
  const spans = state.spans ?? [];
  state.spans = [];
  return spans;
}

export type SpawnRecord = SubtaskSpawn & { toolCallId: string };

/** Where a session stands in its subtask chain, and what it waits for. */
export interface Chain {
  depth: number;
  ancestors: string[];
  deadline: number; // epoch ms; 0 without subtasks
  inheritedTokens: number;
  parentSessionId: string | null;
  children: { input: number; output: number }; // tokens of finished children's subtrees
  childAnswers: string[];
  reported: { input: number; output: number }; // own tokens already reported to the coordinator
  pendingCalls: ToolCall[]; // tool calls of the last turn not processed yet
  spawning: SpawnRecord | null; // stored before its report, so a restart reports it again
  waiting: { toolCallId: string; childSessionId: string } | null;
}

/** The agent's spec with the job it belongs to. */
export type SessionSpec = AgentSpec & { jobId: string; tenantId: string };

export type Failure = { error: string; kind: ErrorKind };

const noChain = (): Chain => ({
  depth: 0,
  ancestors: [],
  deadline: 0,
  inheritedTokens: 0,
  parentSessionId: null,
  children: { input: 0, output: 0 },
  childAnswers: [],
  reported: { input: 0, output: 0 },
  pendingCalls: [],
  spawning: null,
  waiting: null,
});

export const chainOf = (state: SessionState): Chain => (state.chain ??= noChain());

/** This session's tokens and its finished children's. */
export function chainTokens(state: SessionState): number {
  const c = chainOf(state);
  return state.inputTokens + state.outputTokens + c.children.input + c.children.output;
}

/** A session's first state: a top-level item's, or a child's (`subtask`), whose chain it continues. */
export function newState(task: TaskRef, spec: SessionSpec, subtask: SubtaskSpawn | null, now: number): SessionState {
  return {
    sessionId: task.sessionId as string,
    turns: 0,
    inputTokens: 0,
    outputTokens: 0,
    intermediate: [],
    compactions: 0,
    summary: null,
    tailFrom: 1,
    doom: { lastCall: null, repeats: 0 },
    callAttempts: 0,
    done: null,
    chain: {
      ...noChain(),
      depth: subtask?.depth ?? 0,
      ancestors: subtask?.ancestors ?? [],
      deadline: subtask?.deadline ?? (spec.subtasks ? now + spec.subtasks.timeoutMs : 0),
      inheritedTokens: subtask?.inheritedTokens ?? 0,
      parentSessionId: subtask?.parentSessionId ?? null,
    },
  };
}

/** The item's result as the session ends: its last output, and the whole chain's tokens (its calls and its children's). */
export function itemResult(state: SessionState, failure: Failure | null, stopReason = "error"): AgentItemResult {
  const c = chainOf(state).children;
  const input = state.inputTokens + c.input;
  const output = state.outputTokens + c.output;
  return {
    session_id: state.sessionId,
    output_text: state.intermediate.at(-1) ?? "",
    success: failure === null,
    error: failure?.error ?? null,
    error_kind: failure?.kind ?? null,
    stop_reason: failure ? "error" : stopReason,
    turns: state.turns,
    token_usage: { input_tokens: input, output_tokens: output, total_tokens: input + output },
    intermediate_outputs: state.intermediate,
  };
}

/** Own tokens not reported yet, now marked reported (a report after a spawn carries only what followed it). */
export function takeUnreported(state: SessionState): { input_tokens: number; output_tokens: number } {
  const chain = chainOf(state);
  const usage = { input_tokens: state.inputTokens - chain.reported.input, output_tokens: state.outputTokens - chain.reported.output };
  chain.reported = { input: state.inputTokens, output: state.outputTokens };
  return usage;
}

/** A child past its chain's time or token limit ends (its parent reads the failure); null while within them. */
export function chainOver(spec: SessionSpec, state: SessionState, now: number): Failure | null {
  const chain = chainOf(state);
  if (chain.depth === 0 || !spec.subtasks) return null;
  if (now >= chain.deadline) return { error: `the subtask chain's time limit (${Math.round(spec.subtasks.timeoutMs / 1000)} s) passed`, kind: "timeout" };
  const cap = spec.subtasks.maxTotalTokens;
  if (cap !== null && chain.inheritedTokens + chainTokens(state) >= cap) return { error: `the subtask chain used its ${cap} tokens`, kind: "llm_error" };
  return null;
}
