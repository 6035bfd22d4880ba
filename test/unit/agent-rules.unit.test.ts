import { describe, expect, it } from "vitest";
import { compactionCut, estimateTokens, KEEP_RECENT_MESSAGES } from "../../src/agent/compaction";
import { decideAfterTurn, trackCalls, type DoomTracker, type LoopRules } from "../../src/agent/turn-rules";
import { truncate, TOOL_RESULT_MAX_CHARS } from "../../src/agent/tools";
import type { ChatMessage, ToolCall } from "../../src/llm/types";

const rules: LoopRules = { maxTurns: 5, continuationMessage: "", completionMarker: null, maxTotalTokens: null };
const fresh: DoomTracker = { lastCall: null, repeats: 0 };
const call = (name: string, args = "{}"): ToolCall => ({ id: "c", name, arguments: args });
const state = (over: Partial<{ turns: number; totalTokens: number; doom: DoomTracker }> = {}) => ({ turns: 1, totalTokens: 0, doom: fresh, ...over });

describe("stop reasons, in the contract's order", () => {
  it("stops naturally without tool calls or continuation", () => {
    expect(decideAfterTurn(rules, { text: "done", finishReason: "stop", toolCalls: [] }, state())).toEqual({ stop: "natural" });
  });

  it("continues while the marker is absent, and stops once it appears", () => {
    const r = { ...rules, continuationMessage: "go", completionMarker: "DONE" };
    expect(decideAfterTurn(r, { text: "working", finishReason: "stop", toolCalls: [] }, state())).toEqual({ next: "continue" });
    expect(decideAfterTurn(r, { text: "all DONE", finishReason: "stop", toolCalls: [] }, state())).toEqual({ stop: "natural" });
  });

  it("runs tools, then detects the same call three times in a row", () => {
    let doom = trackCalls(fresh, [call("a", '{"x": 1}')]);
    expect(decideAfterTurn(rules, { text: "", finishReason: "tool_calls", toolCalls: [call("a")] }, state({ doom }))).toEqual({ next: "tools" });
    doom = trackCalls(doom, [call("a", '{ "x":1 }')]); // same arguments, other spacing
    doom = trackCalls(doom, [call("a", '{"x":1}')]);
    expect(doom.repeats).toBe(3);
    expect(decideAfterTurn(rules, { text: "", finishReason: "tool_calls", toolCalls: [call("a")] }, state({ doom }))).toEqual({ stop: "doom_loop" });
    expect(trackCalls(doom, [call("a", '{"x":2}')]).repeats).toBe(1);
  });

  it("reports max_tokens before max_turns, and budget last", () => {
    const turn = { text: "cut", finishReason: "length" as const, toolCalls: [] };
    expect(decideAfterTurn(rules, turn, state({ turns: 5 }))).toEqual({ stop: "max_tokens" });
    const going = { ...rules, continuationMessage: "go", maxTotalTokens: 100 };
    const cont = { text: "x", finishReason: "stop" as const, toolCalls: [] };
    expect(decideAfterTurn(going, cont, state({ turns: 5, totalTokens: 500 }))).toEqual({ stop: "max_turns" });
    expect(decideAfterTurn(going, cont, state({ turns: 2, totalTokens: 500 }))).toEqual({ stop: "budget" });
  });
});

describe("compaction", () => {
  const msg = (role: "user" | "assistant", content = "x".repeat(40)): ChatMessage => ({ role, content });

  it("estimates about four characters a token", () => {
    expect(estimateTokens([msg("user", "a".repeat(84))], null)).toBe(25);
  });

  it("keeps the latest messages and never starts the tail with a tool result", () => {
    const history: ChatMessage[] = [msg("user"), msg("assistant"), msg("user"), { role: "assistant", content: "", tool_calls: [call("t")] }];
    history.push({ role: "tool", tool_call_id: "c", name: "t", content: "r" }, msg("assistant"), msg("user"), msg("assistant"));
    const cut = compactionCut(history, 1);
    expect(cut).toBe(history.length - KEEP_RECENT_MESSAGES - 1); // moved back from the tool result to its call
    expect(history[cut as number]?.role).not.toBe("tool");
    expect(compactionCut(history.slice(0, 4), 1)).toBeNull();
  });
});

describe("tool results", () => {
  it("are truncated to a documented size", () => {
    expect(truncate("short")).toBe("short");
    const long = truncate("y".repeat(TOOL_RESULT_MAX_CHARS + 10));
    expect(long.startsWith("y".repeat(TOOL_RESULT_MAX_CHARS))).toBe(true);
    expect(long).toContain("[truncated");
  });
});
