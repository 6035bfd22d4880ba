/**
 * The coordinator's task runner run through whole jobs against scripted providers (./runner-sim.ts:
 * the real runner on a real coordinator store, a fake clock) — throttles, invalid output, server
 * errors, timeouts, crashes, attempts that never report, workers and the coordinator restarting,
 * batch lines and refused batches, agents waiting on their children — checking what must hold
 * whatever happens: every item ends exactly once (one end, one completion event), no more calls in
 * flight than the job's concurrency, retries within max_retries (throttles apart), a throttle fails
 * a task only after its max wait, a lost or re-sent attempt is quarantined at the second loss,
 * every call sent (re-sent ones too) is an attempt, and the runner never counts a defect.
 */
import { describe, expect, it } from "vitest";
import { LOST_ATTEMPTS_MAX } from "../../../src/engine/limits";
import { seeded } from "../../../src/lib/seeded";
import { crash, invalid, ok, throttle, timeout, transient } from "../../unit/engine/outcomes";
import { simulate, type SimResult } from "./runner-sim";
import type { AttemptOutcome } from "../../../src/engine/retry-policy";

const policy = { maxRetries: 2, maxWaitMs: 60_000 };
const none = { input_tokens: 0, output_tokens: 0 };
const outage = (): AttemptOutcome => ({ kind: "transient", error: "502 Bad Gateway", retryAfterMs: null, usage: none, unavailable: "outage" });
const retired = (): AttemptOutcome => ({ kind: "permanent", error: "404 model_not_found", errorKind: "llm_error", usage: none, unavailable: "model" });
const zero = () => 0;

/** The rules every run keeps, whatever its provider did. */
function expectRules(sim: SimResult, concurrency: number, where: string, chain = 1): void {
  expect(sim.defects, where).toBe(0);
  expect(sim.early, where).toBe(0);
  expect(sim.maxBusy, where).toBeLessThanOrEqual(concurrency);
  for (const [i, task] of sim.tasks.entries()) {
    const at = `${where}, task ${i}: ${task.history.join(", ")}`;
    expect(task.ends, at).toHaveLength(1);
    expect(task.events, at).toBe(1);
    expect(task.state.state, at).toBe("done");
    expect(task.state.attempts - task.state.throttles - task.state.route, at).toBeLessThanOrEqual(1 + policy.maxRetries); // fallbacks apart, like throttles
    expect(task.state.route, at).toBeLessThan(chain);
    expect(task.state.losses, at).toBeLessThanOrEqual(LOST_ATTEMPTS_MAX);
    expect(task.state.attempts, at).toBe(task.dispatches.length - task.uncounted);
    const end = task.ends[0];
    if (end?.errorKind === "rate_limited")
      expect((task.endedAt as number) - (task.state.throttledSince as number), at).toBeGreaterThanOrEqual(policy.maxWaitMs);
    else if (!end?.success && task.state.throttledSince !== null) expect(end?.errorKind, at).toBe("internal"); // lost while throttled
  }
}

describe("the task runner through whole jobs", () => {
  // 60 seeds in four tests: each a few hundred milliseconds of CPU alone. The timeout is a guard
  // for a loaded machine, not a wait: the simulation's own count bound ends a runner that never settles.
  for (const first of [1, 16, 31, 46]) {
    it(`whatever the provider does, on every path (call workers, batch lines, agents) and through restarts, every item ends exactly once and the rules hold (seeds ${first}–${first + 14} × 30 tasks)`, async () => {
      let restarts = 0;
      let children = 0;
      for (let seed = first; seed < first + 15; seed++) {
        const rand = seeded(seed);
        const mix = [ok, ok, ok, ok, invalid, transient, timeout, crash, () => throttle(rand() < 0.5 ? null : 3_000), outage, retired];
        const concurrency = 1 + Math.floor(rand() * 8);
        const lines = rand() < 0.5;
        const chain = 1 + Math.floor(rand() * 3);
        const sim = await simulate({
          tasks: 30,
          concurrency,
          policy,
          random: rand,
          chain,
          lineOf: lines ? (i) => i % 3 === 0 : undefined,
          restartEvery: seed % 2 === 0 ? 3 + Math.floor(rand() * 10) : undefined,
          provider: () => {
            const r = rand();
            if (r < 0.03) return "lost";
            if (r < 0.06) return "restart";
            if (r < 0.09) return "refused";
            if (r < 0.12) return "spawn";
            return (mix[Math.floor(rand() * mix.length)] as () => ReturnType<typeof ok>)();
          },
        });
        expectRules(sim, concurrency, `seed ${seed}`, chain);
        restarts += sim.restarts;
        children += sim.children;
      }
      expect(restarts).toBeGreaterThan(20); // the runs did restart, and agents did spawn
      expect(children).toBeGreaterThan(0);
    }, 60_000);
  }

  it("a key that throttles four calls in five loses no item: back-pressure, never a failure", async () => {
    const rand = seeded(7);
    const sim = await simulate({
      tasks: 100,
      concurrency: 16,
      policy: { maxRetries: 0, maxWaitMs: 3600_000 },
      random: rand,
      provider: () => (rand() < 0.8 ? throttle(1_000) : ok()),
    });
    expect(sim.tasks.every((t) => t.ends.length === 1 && t.ends[0]?.success)).toBe(true);
    expect(sim.tasks.reduce((n, t) => n + t.state.throttles, 0)).toBeGreaterThan(100);
    expect(sim.early).toBe(0);
  });

  it("a key that only throttles fails each task `rate_limited` once it has waited its max wait, not before", async () => {
    const sim = await simulate({ tasks: 20, concurrency: 4, policy: { maxRetries: 0, maxWaitMs: 30_000 }, provider: () => throttle() });
    for (const task of sim.tasks) {
      expect(task.ends[0]).toMatchObject({ success: false, errorKind: "rate_limited" });
      const first = task.dispatches[0] as number;
      const last = task.dispatches.at(-1) as number;
      // Failed at the report of its last attempt (latency 100 ms after its dispatch), 30 s or more after its first throttle.
      expect(last + 100 - (first + 100)).toBeGreaterThanOrEqual(30_000);
      expect(task.state.throttles).toBeGreaterThan(3);
    }
  });

  it("attempts that never report are quarantined at the second loss, however many retries the job allows", async () => {
    const sim = await simulate({ tasks: 10, concurrency: 3, policy: { maxRetries: 10, maxWaitMs: 60_000 }, provider: () => "lost" });
    for (const task of sim.tasks) {
      expect(task.ends).toEqual([expect.objectContaining({ success: false, errorKind: "internal" })]);
      expect(task.state.attempts).toBe(LOST_ATTEMPTS_MAX);
    }
    expect(sim.now).toBe(2 * 5_000 * Math.ceil(10 / 3));
  });

  it("server errors use up exactly 1 + max_retries attempts, each after its backoff", async () => {
    const sim = await simulate({ tasks: 5, concurrency: 5, policy: { maxRetries: 3, maxWaitMs: 60_000 }, random: zero, provider: () => transient() });
    for (const task of sim.tasks) {
      expect(task.ends[0]).toMatchObject({ errorKind: "llm_error" });
      expect(task.dispatches).toEqual([0, 600, 1_700, 3_800]); // 100 ms to answer, then 0.5 s, 1 s, 2 s
    }
  });

  it("invalid output then a success: the retry goes at once, with the problems as guidance", async () => {
    const sim = await simulate({ tasks: 3, concurrency: 1, policy, provider: (_t, attempt) => (attempt === 1 ? invalid() : ok(attempt)) });
    expect(sim.tasks.map((t) => t.ends[0]?.output)).toEqual([2, 2, 2]);
    expect(sim.tasks.map((t) => t.dispatches)).toEqual([
      [0, 100],
      [200, 300],
      [400, 500],
    ]);
  });

  it("batch lines: a refused batch's lines go again uncounted, a line's retry waits its backoff without jitter, and no line takes a slot", async () => {
    const sim = await simulate({
      tasks: 12,
      concurrency: 1,
      policy,
      random: () => 0.99,
      lineOf: () => true,
      provider: (_t, attempt) => (attempt === 1 ? "refused" : attempt === 2 ? transient() : ok(attempt)),
    });
    expect(sim.maxBusy).toBe(0);
    for (const task of sim.tasks) {
      expect(task.ends).toEqual([{ success: true, output: 3, errorKind: null }]);
      expect(task.state.attempts).toBe(2); // the refused line's attempt is not counted
      expect(task.dispatches).toEqual([0, 100, 700]); // refused at 100 and sent again; the 500 ms backoff with no jitter
    }
  });

  it("an agent waits for its child: the child runs as a task of its own, then the agent goes on with its attempt not counted twice", async () => {
    const sim = await simulate({ tasks: 4, concurrency: 2, policy, provider: (_t, attempt) => (attempt === 1 && _t % 2 === 0 ? "spawn" : ok("done")) });
    expectRules(sim, 2, "agents");
    expect(sim.children).toBe(2);
    expect(sim.tasks.map((t) => [t.state.attempts, t.dispatches.length])).toEqual([
      [1, 2],
      [1, 1],
      [1, 2],
      [1, 1],
    ]);
  });

  it("a coordinator restarted after every turn runs the job as one that never restarts", async () => {
    const script = (t: number, attempt: number) => (attempt === 1 && t % 3 === 0 ? transient() : t % 5 === 0 && attempt === 1 ? ("restart" as const) : ok(t));
    const steady = await simulate({ tasks: 15, concurrency: 3, policy, random: zero, provider: script });
    const restarted = await simulate({ tasks: 15, concurrency: 3, policy, random: zero, provider: script, restartEvery: 1 });
    expect(restarted.restarts).toBeGreaterThan(30);
    expectRules(restarted, 3, "restarted");
    expect(restarted.tasks.map((t) => [t.ends, t.dispatches, t.state.attempts])).toEqual(steady.tasks.map((t) => [t.ends, t.dispatches, t.state.attempts]));
  });
});
