/** An agentic sub-session's loop state: a new session's, its result, the tokens left to report, and a child's chain limits. */
import { describe, expect, it } from "vitest";
import { chainOf, chainOver, itemResult, newState, takeUnreported, type SessionSpec } from "../../src/agent/session-state";
import type { TaskRef } from "../../src/engine/types";

const task: TaskRef = { jobId: "job_1", stage: "map", index: 0, attempt: 1, token: "t", slot: 0, sessionId: "ses_a", round: 1 };
const spec = (subtasks: SessionSpec["subtasks"] = null) => ({ subtasks }) as SessionSpec;
const child = { sessionId: "ses_b", parentSessionId: "ses_a", prompt: "p", depth: 2, ancestors: ["f1", "f2"], deadline: 5_000, inheritedTokens: 40 };

describe("session state", () => {
  it("starts a top-level session with its chain's deadline from now, and a child within its parent's chain", () => {
    expect(chainOf(newState(task, spec(), null, 1_000))).toMatchObject({ depth: 0, deadline: 0, parentSessionId: null });
    expect(chainOf(newState(task, spec({ maxDepth: 3, maxTotalTokens: null, timeoutMs: 60_000 }), null, 1_000)).deadline).toBe(61_000);
    const state = newState(task, spec({ maxDepth: 3, maxTotalTokens: null, timeoutMs: 60_000 }), child, 1_000);
    expect(state.sessionId).toBe("ses_a");
    expect(chainOf(state)).toMatchObject({ depth: 2, ancestors: ["f1", "f2"], deadline: 5_000, inheritedTokens: 40, parentSessionId: "ses_a" });
  });

  it("reads a state stored before subtasks as a session at depth 0", () => {
    const old = newState(task, spec(), null, 0);
    delete old.chain;
    expect(chainOf(old)).toMatchObject({ depth: 0, children: { input: 0, output: 0 } });
  });

  it("ends with the last output and the tokens of the whole chain, its children's too", () => {
    const state = newState(task, spec(), null, 0);
    state.intermediate = ["first", "last"];
    state.turns = 2;
    state.inputTokens = 10;
    state.outputTokens = 5;
    chainOf(state).children = { input: 100, output: 50 };
    expect(itemResult(state, null, "completion_marker")).toMatchObject({
      output_text: "last",
      success: true,
      error: null,
      stop_reason: "completion_marker",
      turns: 2,
      token_usage: { input_tokens: 110, output_tokens: 55, total_tokens: 165 },
    });
    expect(itemResult(state, { error: "boom", kind: "timeout" }, "max_turns")).toMatchObject({
      success: false,
      error: "boom",
      error_kind: "timeout",
      stop_reason: "error",
    });
  });

  it("reports each token once: a second report carries only what followed the first", () => {
    const state = newState(task, spec(), null, 0);
    state.inputTokens = 10;
    state.outputTokens = 4;
    expect(takeUnreported(state)).toEqual({ input_tokens: 10, output_tokens: 4 });
    state.inputTokens = 15;
    expect(takeUnreported(state)).toEqual({ input_tokens: 5, output_tokens: 0 });
    expect(takeUnreported(state)).toEqual({ input_tokens: 0, output_tokens: 0 });
  });

  it("stops a child past its chain's time or tokens, never a top-level session", () => {
    const settings = { maxDepth: 3, maxTotalTokens: 100, timeoutMs: 60_000 };
    const top = newState(task, spec(settings), null, 0);
    top.inputTokens = 1_000;
    expect(chainOver(spec(settings), top, 10 ** 12)).toBeNull();
    const state = newState(task, spec(settings), child, 0);
    expect(chainOver(spec(settings), state, 4_999)).toBeNull();
    expect(chainOver(spec(settings), state, 5_000)).toEqual({ error: "the subtask chain's time limit (60 s) passed", kind: "timeout" });
    state.inputTokens = 60; // 40 inherited + 60 = the cap
    expect(chainOver(spec(settings), state, 0)).toEqual({ error: "the subtask chain used its 100 tokens", kind: "llm_error" });
    expect(chainOver(spec({ ...settings, maxTotalTokens: null }), state, 0)).toBeNull();
  });
});
