/**
 * Fallback chains (contract v4): which failures say a model is unavailable, as both SDKs raise them
 * (src/llm/errors.ts `unavailableOf`, through failureOutcome); the chain a stage's calls may take
 * (src/engine/fallbacks.ts); and the task machine's move to the next model — at once, not against
 * max_retries, never on invalid output, `unavailable` when the last model cannot answer either.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { failureOutcome } from "../../../src/engine/attempt";
import { modelChain, routedWork } from "../../../src/engine/fallbacks";
import type { AttemptOutcome } from "../../../src/engine/retry-policy";
import { freshTask, taskTransition, type TaskPolicy, type TaskState } from "../../../src/engine/task-machine";
import type { StageWork } from "../../../src/engine/types";
import { unavailableOf } from "../../../src/llm/errors";
import { Circuits, COOL_DOWN_MS, OUTAGES_TO_OPEN } from "../../../durable-objects/coordinator/circuits";
import { invalid, ok, throttle } from "./outcomes";

const openai = (status: number, error: Record<string, unknown>) => OpenAI.APIError.generate(status, { error }, undefined, new Headers());
const anthropic = (status: number, type: string, message: string) =>
  Anthropic.APIError.generate(status, { type: "error", error: { type, message } }, undefined, new Headers());

describe("what says a model is unavailable", () => {
  it("reads each provider's words: a spent quota, a retired model, no capacity, an outage — and nothing else", () => {
    expect(unavailableOf(openai(429, { message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" }))).toBe("quota");
    const gone = openai(404, {
      message: "The model `gpt-x` does not exist or you do not have access to it.",
      type: "invalid_request_error",
      code: "model_not_found",
    });
    expect(unavailableOf(gone)).toBe("model");
    expect(unavailableOf(anthropic(404, "not_found_error", "model: claude-x"))).toBe("model");
    expect(unavailableOf(openai(429, { message: "Resource temporarily unavailable", type: "invalid_request_error", code: "resource_unavailable" }))).toBe(
      "capacity",
    );
    expect(unavailableOf(anthropic(529, "overloaded_error", "Overloaded"))).toBe("capacity");
    expect(unavailableOf(openai(500, { message: "server error", type: "server_error" }))).toBe("outage");
    expect(unavailableOf(anthropic(503, "api_error", "unavailable"))).toBe("outage");
    expect(unavailableOf(new OpenAI.APIConnectionError({ message: "Connection error." }))).toBe("outage");
    // A rate limit is pacing; a 404 for something else, a bad request, a timeout are the call's own.
    expect(unavailableOf(openai(429, { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" }))).toBeNull();
    expect(unavailableOf(anthropic(404, "not_found_error", "file: f1"))).toBeNull();
    expect(unavailableOf(openai(400, { message: "bad", type: "invalid_request_error", code: null }))).toBeNull();
    expect(unavailableOf(new OpenAI.APIConnectionTimeoutError())).toBeNull();
  });

  it("the attempt's outcome carries it, as the same transient or permanent failure as before", () => {
    expect(failureOutcome(openai(500, { message: "x" }), 1_000)).toMatchObject({ kind: "transient", unavailable: "outage" });
    expect(failureOutcome(anthropic(529, "overloaded_error", "Overloaded"), 1_000)).toMatchObject({
      kind: "transient",
      throttled: true,
      unavailable: "capacity",
    });
    expect(failureOutcome(openai(404, { message: "x", code: "model_not_found" }), 1_000)).toMatchObject({ kind: "permanent", unavailable: "model" });
    expect(failureOutcome(openai(429, { message: "x", type: "insufficient_quota" }), 1_000)).toMatchObject({
      kind: "permanent",
      quota: true,
      unavailable: "quota",
    });
    expect(failureOutcome(openai(401, { message: "x" }), 1_000)).not.toHaveProperty("unavailable");
  });
});

describe("the chain a stage's calls may take", () => {
  const call = (model: string): StageWork => ({ kind: "call", tenantId: "t", call: { model } as never });
  const spec = { model: "openai/a", fallbacks: ["anthropic/b", "openai/c"] };

  it("the job's fallbacks follow the job's model, on realtime call stages only", () => {
    expect(modelChain(spec, call("openai/a"))).toEqual(["openai/a", "anthropic/b", "openai/c"]);
    expect(modelChain(spec, call("openai/cheap"))).toEqual(["openai/cheap"]); // a cascade's cheaper model keeps its own
    expect(modelChain(spec, { kind: "batch", tenantId: "t", call: { model: "openai/a" } as never })).toEqual(["openai/a"]);
    expect(modelChain({ model: "openai/a" }, call("openai/a"))).toEqual(["openai/a"]); // a spec stored before v4
    expect(modelChain(spec, { ...call("openai/a"), oneModel: true } as StageWork)).toEqual(["openai/a"]); // a cascade target's sample
    expect(routedWork(call("openai/a"), "anthropic/b")).toMatchObject({ call: { model: "anthropic/b" } });
  });
});

describe("the task machine's fallback", () => {
  const policy: TaskPolicy = { maxRetries: 1, maxWaitMs: 60_000, chain: 3 };
  const running = (over: Partial<TaskState> = {}): TaskState => ({
    ...freshTask(),
    state: "running",
    attempts: 1,
    slot: 2,
    token: "t",
    dispatchedAt: 0,
    ...over,
  });
  const report = (task: TaskState, outcome: AttemptOutcome, p = policy) => taskTransition(task, { type: "report", outcome, now: 1_000, random: () => 0 }, p);
  const outage: AttemptOutcome = { kind: "transient", error: "500", retryAfterMs: null, usage: { input_tokens: 0, output_tokens: 0 }, unavailable: "outage" };
  const retired: AttemptOutcome = {
    kind: "permanent",
    error: "404",
    errorKind: "llm_error",
    usage: { input_tokens: 0, output_tokens: 0 },
    unavailable: "model",
  };

  it("an unavailable model sends the task to the next one at once, its slot freed, not against max_retries", () => {
    const moved = report(running({ throttledSince: 500 }), outage);
    expect(moved).toEqual({
      task: { ...running(), state: "pending", slot: null, token: null, route: 1, throttledSince: null },
      effects: [{ type: "free-slot", slot: 2 }],
    });
    // On the second model, a first retry is still its own: attempts 3 − route 1 = 2 ≤ 1 + max_retries.
    const second = report(running({ attempts: 2, route: 1 }), transientOf());
    expect(second?.task).toMatchObject({ state: "waiting", route: 1 });
  });

  it("the last model of the chain that cannot answer fails the task `unavailable`; without a chain, as before", () => {
    expect(report(running({ attempts: 3, route: 2 }), retired)?.effects.at(-1)).toMatchObject({
      type: "finish",
      end: { success: false, errorKind: "unavailable" },
    });
    expect(report(running(), retired, { maxRetries: 1, maxWaitMs: 60_000 })?.effects.at(-1)).toMatchObject({ end: { errorKind: "llm_error" } });
    expect(report(running(), outage, { maxRetries: 1, maxWaitMs: 60_000 })?.task).toMatchObject({ state: "waiting", route: 0 });
  });

  it("invalid output, a rate limit and a success stay on their model", () => {
    expect(report(running(), invalid())?.task).toMatchObject({ state: "pending", route: 0, problems: ["the response is not valid JSON"] });
    expect(report(running(), throttle(1_000))?.task).toMatchObject({ state: "waiting", route: 0 });
    expect(report(running({ route: 1 }), ok())?.task).toMatchObject({ state: "done", route: 1 });
  });

  it("a model that cannot take the task within the job's max wait is unavailable to it: a throttle past it, or a pacer that granted nothing", () => {
    const throttled = running({ throttles: 3, throttledSince: -60_000 }); // throttled since a minute before this answer
    const late = report(throttled, throttle(120_000)); // its max_wait_secs (60 s) has passed
    expect(late?.task).toMatchObject({ state: "pending", route: 1, throttledSince: null });
    expect(report(throttled, throttle(120_000), { ...policy, chain: 1 })?.effects.at(-1)).toMatchObject({ end: { errorKind: "rate_limited" } });
    const waiting: TaskState = { ...freshTask(), route: 1 };
    expect(taskTransition(waiting, { type: "fall-back" }, policy)?.task).toMatchObject({ state: "pending", route: 2 });
    expect(taskTransition({ ...waiting, route: 2 }, { type: "fall-back" }, policy)).toBeNull(); // the last model: it gives up instead
    expect(taskTransition(running(), { type: "fall-back" }, policy)).toBeNull();
  });

  it("a recover's reset starts the task on its stage's own model again", () => {
    expect(taskTransition({ ...running({ route: 2 }), state: "done" }, { type: "reset", blocked: false }, policy)?.task.route).toBe(0);
  });
});

function transientOf(): AttemptOutcome {
  return { kind: "transient", error: "502 but not an outage we know", retryAfterMs: null, usage: { input_tokens: 0, output_tokens: 0 } };
}

describe("a job's circuits", () => {
  const outage: AttemptOutcome = { kind: "transient", error: "500", retryAfterMs: null, usage: { input_tokens: 0, output_tokens: 0 }, unavailable: "outage" };

  it("open after outages in a row to OUTAGES_TO_OPEN different items, for COOL_DOWN_MS; then one probe: an answer closes it, an outage opens it again", () => {
    const circuits = new Circuits();
    for (let i = 1; i < OUTAGES_TO_OPEN; i++) circuits.observe("m", outage, 0, `items:${i}`);
    expect(circuits.state("m", 0)).toBe("closed");
    circuits.observe("m", throttle(1_000), 0, "items:9"); // a rate limit says the model is up: the run of outages ends
    for (let i = 1; i < OUTAGES_TO_OPEN; i++) circuits.observe("m", outage, 0, `items:${i}`);
    expect(circuits.state("m", 0)).toBe("closed");
    circuits.observe("m", outage, 100, "items:0");
    expect(circuits.state("m", 100)).toBe("open");
    expect(circuits.admit("m", 100 + COOL_DOWN_MS - 1)).toBe(false);
    expect(circuits.state("other", 100)).toBe("closed"); // per model
    expect(circuits.admit("m", 100 + COOL_DOWN_MS)).toBe(true); // the probe
    expect(circuits.state("m", 100 + COOL_DOWN_MS)).toBe("half_open");
    expect(circuits.admit("m", 100 + COOL_DOWN_MS)).toBe(false); // one probe at a time
    circuits.observe("m", outage, 40_000, "items:5");
    expect(circuits.state("m", 40_000)).toBe("open");
    expect(circuits.admit("m", 40_000 + COOL_DOWN_MS)).toBe(true);
    circuits.observe("m", ok(), 80_000, "items:5");
    expect(circuits.admit("m", 80_000)).toBe(true);
  });

  it("never opens on one item's outages, however many: a poison input meets its own max_retries", () => {
    const circuits = new Circuits();
    for (let i = 0; i < 10; i++) circuits.observe("m", outage, i, "items:7");
    expect(circuits.state("m", 10)).toBe("closed");
    circuits.observe("m", outage, 11, "items:8");
    expect(circuits.state("m", 11)).toBe(OUTAGES_TO_OPEN > 2 ? "closed" : "open");
  });
});
