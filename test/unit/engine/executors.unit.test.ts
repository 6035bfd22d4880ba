/** Executors: what the engine knows of each kind of work, asked instead of an `if` on the kind. */
import { describe, expect, it } from "vitest";
import { executorOf } from "../../../src/engine/executors";
import type { AgentSpec, StageWork } from "../../../src/engine/types";
import { call } from "./specs";

const agent: AgentSpec = {
  model: "openai/m",
  promptTemplate: "{{ item }}",
  systemPrompt: "s",
  temperature: null,
  maxTokens: 100,
  timeoutMs: 10_000,
  maxRetries: 2,
  maxTurns: 5,
  continuationMessage: "go on",
  completionMarker: null,
  readOnly: false,
  tools: [],
  maxContextTokens: null,
  maxTotalTokens: 2_000,
};
const callWork: StageWork = { kind: "call", tenantId: "t", call: call("{{ item }}", { timeoutMs: 20_000, maxTokens: 50 }) };
const agentWork: StageWork = { kind: "agent", tenantId: "t", agent };

describe("executors", () => {
  it("a model call: one call per dispatch on the slot's worker, paced by the rate pacer, cacheable, lost after its timeout and a grace", () => {
    const e = executorOf(callWork);
    expect([e.paced, e.session, e.cacheable, e.callsPerDispatch(callWork), e.tokenCap(callWork)]).toEqual([true, false, true, 1, null]);
    expect(e.call(callWork)).toMatchObject({ promptTemplate: "{{ item }}", maxTokens: 50 });
    expect(e.lostAfterMs(callWork)).toBe(20_000 + 15_000);
    expect(e.estimateNote).toBeNull();
  });

  it("an agent: a sub-session of its own, up to max_turns calls, its token cap, lost after every turn's calls and retries", () => {
    const e = executorOf(agentWork);
    expect([e.paced, e.session, e.cacheable, e.callsPerDispatch(agentWork), e.tokenCap(agentWork)]).toEqual([false, true, false, 5, 2_000]);
    expect(e.call(agentWork)).toMatchObject({ systemPrompt: "s", maxTokens: 100 });
    expect(e.lostAfterMs(agentWork)).toBe(5 * (10_000 * 3 + 30_000) + 15_000);
    expect(e.estimateNote).toMatch(/max_turns/);
  });
});
