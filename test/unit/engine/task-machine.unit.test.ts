/**
 * The task state machine (src/engine/task-machine.ts), each transition on its own. Whole jobs'
 * worth of tasks run by the coordinator's task runner against scripted providers are
 * test/integration/coordinator/task-runner.integration.test.ts.
 */
import { describe, expect, it } from "vitest";
import { freshTask, taskTransition, type TaskEvent, type TaskPhase, type TaskState } from "../../../src/engine/task-machine";
import { LOST_ATTEMPTS_MAX } from "../../../src/engine/limits";
import { invalid, ok, throttle, timeout, transient, usage } from "./outcomes";

const policy = { maxRetries: 2, maxWaitMs: 60_000 };
const zero = () => 0;
const running = (over: Partial<TaskState> = {}): TaskState => ({
  ...freshTask(),
  state: "running",
  attempts: 1,
  slot: 3,
  token: "tok",
  dispatchedAt: 0,
  ...over,
});
const report = (outcome: Parameters<typeof ok>[0] extends never ? never : ReturnType<typeof ok>, now = 1_000): TaskEvent => ({
  type: "report",
  outcome,
  now,
  random: zero,
});
const phases: TaskPhase[] = ["blocked", "pending", "waiting", "running", "child", "done"];

describe("task transitions", () => {
  it("dispatches only a pending task: an attempt counted, its slot and token kept", () => {
    const t = taskTransition(freshTask(), { type: "dispatch", slot: 2, token: "a", now: 50 }, policy);
    expect(t).toEqual({ task: { ...freshTask(), state: "running", attempts: 1, slot: 2, token: "a", dispatchedAt: 50 }, effects: [] });
    for (const state of phases.filter((p) => p !== "pending")) {
      expect(taskTransition({ ...freshTask(), state }, { type: "dispatch", slot: 0, token: "b", now: 0 }, policy)).toBeNull();
    }
  });

  it("takes a report only while running (a stale one does nothing)", () => {
    for (const state of phases.filter((p) => p !== "running")) expect(taskTransition({ ...running(), state }, report(ok()), policy)).toBeNull();
  });

  it("a success ends the task and frees its slot", () => {
    const t = taskTransition(running(), report(ok({ a: 1 })), policy);
    expect(t?.task).toMatchObject({ state: "done", slot: null, token: null, attempts: 1 });
    expect(t?.effects).toEqual([
      { type: "free-slot", slot: 3 },
      { type: "finish", end: { success: true, output: { a: 1 }, error: null, errorKind: null } },
    ]);
  });

  it("invalid output goes again at once with guidance; the last allowed attempt fails `validation`", () => {
    const t = taskTransition(running(), report(invalid()), policy);
    expect(t?.task).toMatchObject({ state: "pending", problems: ["the response is not valid JSON"], slot: null, token: null });
    expect(t?.effects).toEqual([{ type: "free-slot", slot: 3 }]);
    const last = taskTransition(running({ attempts: 3 }), report(invalid()), policy);
    expect(last?.effects.at(-1)).toMatchObject({ type: "finish", end: { success: false, errorKind: "validation" } });
  });

  it("a server error waits its backoff (a wake at the due time), then fails `llm_error` past max_retries", () => {
    const t = taskTransition(running(), report(transient(), 1_000), policy);
    expect(t?.task).toMatchObject({ state: "waiting", readyAt: 1_500, throttles: 0, throttledSince: null });
    expect(t?.effects).toContainEqual({ type: "wake", at: 1_500 });
    expect(taskTransition(running({ attempts: 3 }), report(transient()), policy)?.effects.at(-1)).toMatchObject({ end: { errorKind: "llm_error" } });
  });

  it("a throttle is back-pressure: counted apart from max_retries, its run of throttles timed from the first", () => {
    const first = taskTransition(running({ attempts: 2 }), report(throttle(2_000), 1_000), policy);
    expect(first?.task).toMatchObject({ state: "waiting", throttles: 1, throttledSince: 1_000, readyAt: 3_000 });
    const again = taskTransition({ ...(first?.task as TaskState), state: "running", attempts: 3, slot: 0, token: "x" }, report(throttle(), 5_000), policy);
    expect(again?.task).toMatchObject({ state: "waiting", throttles: 2, throttledSince: 1_000 });
    // Two attempts that were not throttles and two that were: max_retries 2 is not used up by the throttles, and the run of throttles ends.
    const after = taskTransition({ ...(again?.task as TaskState), state: "running", attempts: 4, slot: 0, token: "y" }, report(timeout(), 9_000), policy);
    expect(after?.task).toMatchObject({ state: "pending", throttles: 2, throttledSince: null });
    // One more that is not: the third of max_retries 2's three attempts fails the task.
    const last = taskTransition({ ...(after?.task as TaskState), state: "running", attempts: 5, slot: 0, token: "z" }, report(timeout(), 9_500), policy);
    expect(last?.effects.at(-1)).toMatchObject({ type: "finish", end: { errorKind: "timeout" } });
  });

  it("a throttle past the job's max wait fails the task `rate_limited`", () => {
    const t = taskTransition(running({ throttles: 5, throttledSince: 0 }), report(throttle(), 60_000), policy);
    expect(t?.effects.at(-1)).toMatchObject({ type: "finish", end: { success: false, errorKind: "rate_limited" } });
    const before = taskTransition(running({ throttles: 5, throttledSince: 0 }), report(throttle(), 59_000), policy);
    expect(before?.task.state).toBe("waiting");
  });

  it("an agent's spawn waits as `child` with no slot, its attempt not counted until dispatched again", () => {
    const spawn = { sessionId: "s2", parentSessionId: "s1", depth: 1, task: "t", tools: [] } as never;
    const t = taskTransition(running({ attempts: 2 }), report({ kind: "spawn", spawn, usage }), policy);
    expect(t?.task).toMatchObject({ state: "child", attempts: 1, slot: null });
    expect(t?.effects).toEqual([
      { type: "free-slot", slot: 3 },
      { type: "spawn", spawn },
    ]);
    expect(taskTransition(t?.task as TaskState, { type: "child-ended" }, policy)?.task.state).toBe("pending");
    expect(taskTransition(freshTask(), { type: "child-ended" }, policy)).toBeNull();
  });

  it("a lost attempt goes again; the second loss quarantines the task (`internal`, its session stopped), whatever max_retries", () => {
    const generous = { maxRetries: 10, maxWaitMs: 60_000 };
    const once = taskTransition(running(), { type: "lost", why: "no report" }, generous);
    expect(once?.task).toMatchObject({ state: "pending", losses: 1, attempts: 1 });
    const twice = taskTransition(
      { ...(once?.task as TaskState), state: "running", attempts: 2, slot: 1, token: "z" },
      { type: "lost", why: "no report" },
      generous,
    );
    expect(twice?.task).toMatchObject({ state: "done", losses: LOST_ATTEMPTS_MAX });
    expect(twice?.effects).toEqual([
      { type: "free-slot", slot: 1 },
      { type: "stop-session" },
      {
        type: "finish",
        end: { success: false, output: null, error: "The attempt was lost 2 times (no report); the task is not retried again.", errorKind: "internal" },
      },
    ]);
    const lastAttempt = taskTransition(running({ attempts: 3 }), { type: "lost", why: "gone" }, policy);
    expect(lastAttempt?.task.state).toBe("done");
  });

  it("a dispatch handed to its worker twice re-sends its call: one more attempt on the same slot and token, counted as a loss", () => {
    const generous = { maxRetries: 10, maxWaitMs: 60_000 };
    const begun = taskTransition(running({ handed: 0 }), { type: "hand", why: "restarted", now: 5 }, generous);
    expect(begun).toEqual({ task: running({ handed: 1 }), effects: [] }); // the first hand: nothing else changes
    const again = taskTransition(begun?.task as TaskState, { type: "hand", why: "restarted", now: 9 }, generous);
    expect(again?.task).toMatchObject({ state: "running", attempts: 2, losses: 1, handed: 2, slot: 3, token: "tok", dispatchedAt: 9 });
    expect(again?.effects).toEqual([{ type: "resent" }]);
    // A pulled task is handed by the answer that dispatched it: its next hand is a re-send.
    const pulled = taskTransition({ ...freshTask(), state: "pending" }, { type: "dispatch", slot: 1, token: "p", now: 0, handed: true }, generous);
    expect(taskTransition(pulled?.task as TaskState, { type: "hand", why: "restarted", now: 1 }, generous)?.effects).toEqual([{ type: "resent" }]);
    // Lost LOST_ATTEMPTS_MAX times in all, or out of attempts: the task ends where it is, its slot freed.
    const third = taskTransition(again?.task as TaskState, { type: "hand", why: "restarted", now: 12 }, generous);
    expect(third?.task).toMatchObject({ state: "done", losses: LOST_ATTEMPTS_MAX });
    expect(third?.effects.at(-1)).toEqual({
      type: "finish",
      end: { success: false, output: null, error: "The attempt was lost 2 times (restarted); the task is not retried again.", errorKind: "internal" },
    });
    expect(third?.effects[0]).toEqual({ type: "free-slot", slot: 3 });
    const last = taskTransition(running({ attempts: 3, handed: 1 }), { type: "hand", why: "restarted", now: 1 }, policy);
    expect(last?.task.state).toBe("done");
    for (const state of phases.filter((p) => p !== "running"))
      expect(taskTransition({ ...freshTask(), state }, { type: "hand", why: "x", now: 1 }, policy)).toBeNull();
  });

  it("a batch line (no slot) frees nothing; withdrawn, its attempt is not counted", () => {
    const line = running({ slot: null, token: "batch:b1" });
    expect(taskTransition(line, report(ok()), policy)?.effects).toEqual([
      { type: "finish", end: { success: true, output: "ok", error: null, errorKind: null } },
    ]);
    expect(taskTransition(line, { type: "withdraw" }, policy)).toEqual({
      task: { ...line, state: "pending", attempts: 0, slot: null, token: null },
      effects: [],
    });
  });

  it("a release (the job's end) gives the slot back and keeps the attempt; due, ready, local, reset", () => {
    expect(taskTransition(running(), { type: "release" }, policy)).toEqual({
      task: { ...running(), state: "pending", slot: null, token: null },
      effects: [{ type: "free-slot", slot: 3 }],
    });
    const waiting: TaskState = { ...freshTask(), state: "waiting", readyAt: 500 };
    expect(taskTransition(waiting, { type: "due", now: 499 }, policy)).toBeNull();
    expect(taskTransition(waiting, { type: "due", now: 500 }, policy)?.task.state).toBe("pending");
    expect(taskTransition(freshTask(true), { type: "ready" }, policy)?.task.state).toBe("pending");
    expect(taskTransition(freshTask(), { type: "ready" }, policy)).toBeNull();
    expect(taskTransition(freshTask(), { type: "local", output: 7 }, policy)?.effects).toEqual([
      { type: "finish", end: { success: true, output: 7, error: null, errorKind: null } },
    ]);
    expect(taskTransition(running(), { type: "local", output: 7 }, policy)).toBeNull();
    // give-up: a pending task fails where it waits (its pacer granted nothing past the max wait); no other state gives up.
    const giveUp = { type: "give-up", error: "starved", errorKind: "rate_limited" } as const;
    expect(taskTransition(freshTask(), giveUp, policy)).toEqual({
      task: { ...freshTask(), state: "done" },
      effects: [{ type: "finish", end: { success: false, output: null, error: "starved", errorKind: "rate_limited" } }],
    });
    for (const other of [running(), freshTask(true), { ...freshTask(), state: "waiting" as const }]) expect(taskTransition(other, giveUp, policy)).toBeNull();
    const done: TaskState = { ...running({ attempts: 3, losses: 1, throttles: 4 }), state: "done", slot: null };
    expect(taskTransition(done, { type: "reset", blocked: false }, policy)?.task).toEqual({ ...freshTask(), losses: 1 }); // its losses kept
    expect(taskTransition({ ...freshTask(true) }, { type: "reset", blocked: false }, policy)?.task).toEqual(freshTask(true));
  });
});
