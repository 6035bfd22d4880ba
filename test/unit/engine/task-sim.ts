/**
 * The task state machine (src/engine/task-machine.ts) run in memory, the way the coordinator runs
 * it (durable-objects/coordinator/task-steps.ts, job-run.ts: dispatch into free slots, reports,
 * the alarm's sweep for lost attempts and due retries) with a fake clock and a scripted provider:
 * each dispatched attempt gets an outcome from `provider` and reports after `latencyMs`, or never
 * (lost) — then the sweep finds it `lostAfterMs` after its dispatch — or its worker restarts
 * mid-call (restart): it claims the task again, and the call goes again under the same token (the
 * machine's `hand`, as hand-over.ts applies it). No runtime, no storage, no timers: thousands of
 * tasks' lives in milliseconds.
 */
import { freshTask, taskTransition, type TaskEnd, type TaskEvent, type TaskPolicy, type TaskState } from "../../../src/engine/task-machine";
import type { AttemptOutcome } from "../../../src/engine/retry-policy";

/** What the provider does with one attempt: its outcome, `lost` (no report ever), or `restart` (its worker restarts mid-call and claims it again). */
export type Script = (task: number, attempt: number, now: number) => AttemptOutcome | "lost" | "restart";

export interface SimOptions {
  tasks: number;
  concurrency: number;
  policy: TaskPolicy;
  provider: Script;
  latencyMs?: number;
  lostAfterMs?: number;
  random?: () => number;
  /** Stop after this much fake time (a machine that never ends must not hang the test). */
  horizonMs?: number;
}

export interface SimTask {
  state: TaskState;
  ends: TaskEnd[];
  /** When each attempt was dispatched, and when the task was last made due (readyAt of its retry). */
  dispatches: number[];
  dueAt: number[];
  throttledRuns: { since: number; endedAt: number }[];
  endedAt: number | null;
}

export interface SimResult {
  tasks: SimTask[];
  now: number;
  maxBusy: number;
  /** Transitions the machine refused (null): each a defect of the runner or the machine. */
  refused: { task: number; event: TaskEvent["type"] }[];
  wakes: number;
  /** Dispatches of a task before its retry was due: each a defect. */
  early: number;
}

type Pending = { at: number; task: number; token: string; outcome: AttemptOutcome | "lost" | "restart" };

import { seeded } from "../seeded";
export { seeded };

export function simulate(options: SimOptions): SimResult {
  const { concurrency, policy, provider } = options;
  const latency = options.latencyMs ?? 100;
  const lostAfter = options.lostAfterMs ?? 5_000;
  const random = options.random ?? seeded(1);
  const horizon = options.horizonMs ?? 24 * 3600_000;
  const tasks: SimTask[] = Array.from({ length: options.tasks }, () => ({ state: freshTask(), ends: [], dispatches: [], dueAt: [], throttledRuns: [], endedAt: null }));
  const busy = new Set<number>();
  const inFlight: Pending[] = [];
  const result: SimResult = { tasks, now: 0, maxBusy: 0, refused: [], wakes: 0, early: 0 };
  let now = 0;
  let tokens = 0;

  const apply = (i: number, event: TaskEvent): boolean => {
    const task = tasks[i] as SimTask;
    const t = taskTransition(task.state, event, policy);
    if (!t) {
      result.refused.push({ task: i, event: event.type });
      return false;
    }
    const before = task.state;
    task.state = t.task;
    if (before.throttledSince !== null && t.task.throttledSince === null) task.throttledRuns.push({ since: before.throttledSince, endedAt: now });
    for (const effect of t.effects) {
      if (effect.type === "free-slot") busy.delete(effect.slot);
      if (effect.type === "finish") {
        task.ends.push(effect.end);
        task.endedAt = now;
      }
      if (effect.type === "wake") {
        result.wakes++;
        task.dueAt.push(effect.at);
      }
    }
    return true;
  };

  const dispatch = () => {
    for (let i = 0; i < tasks.length && busy.size < concurrency; i++) {
      const task = tasks[i] as SimTask;
      if (task.state.state !== "pending") continue;
      if (task.state.readyAt > now) result.early++;
      let slot = 0;
      while (busy.has(slot)) slot++;
      const token = `t${++tokens}`;
      if (!apply(i, { type: "dispatch", slot, token, now })) continue;
      busy.add(slot);
      result.maxBusy = Math.max(result.maxBusy, busy.size);
      apply(i, { type: "hand", why: "restarted", now }); // its worker's claim
      send(i, token);
    }
  };

  /** The task's call goes out (again, after a restart): an attempt under way. */
  const send = (i: number, token: string) => {
    const task = tasks[i] as SimTask;
    task.dispatches.push(now);
    const outcome = provider(i, task.state.attempts, now);
    inFlight.push({ at: outcome === "lost" ? now + lostAfter : now + latency, task: i, token, outcome });
  };

  /** An attempt's end: its report, its loss found by the sweep, or its worker's restart and second claim. */
  const settle = (p: Pending) => {
    if (p.outcome === "lost") return apply(p.task, { type: "lost", why: "no report in time" });
    if (p.outcome !== "restart") return apply(p.task, { type: "report", outcome: p.outcome, now, random });
    if (apply(p.task, { type: "hand", why: "restarted", now }) && tasks[p.task]?.state.state === "running") send(p.task, p.token);
    return true;
  };

  dispatch();
  while (now <= horizon) {
    const nextReport = Math.min(...inFlight.map((p) => p.at));
    const nextDue = Math.min(...tasks.filter((t) => t.state.state === "waiting").map((t) => t.state.readyAt));
    const next = Math.min(nextReport, nextDue);
    if (next === Infinity) break;
    now = Math.max(now, next);
    for (const p of inFlight.filter((q) => q.at <= now)) {
      inFlight.splice(inFlight.indexOf(p), 1);
      const task = tasks[p.task] as SimTask;
      if (task.state.token !== p.token) continue; // stale
      settle(p);
    }
    for (const [i, task] of tasks.entries()) if (task.state.state === "waiting" && task.state.readyAt <= now) apply(i, { type: "due", now });
    dispatch();
  }
  result.now = now;
  return result;
}

export const usage = { input_tokens: 1, output_tokens: 1 };
export const ok = (output: unknown = "ok"): AttemptOutcome => ({ kind: "success", output, usage });
export const throttle = (retryAfterMs: number | null = null): AttemptOutcome => ({ kind: "transient", error: "429 Too Many Requests", retryAfterMs, throttled: true, usage });
export const transient = (): AttemptOutcome => ({ kind: "transient", error: "500 server error", retryAfterMs: null, usage });
export const invalid = (): AttemptOutcome => ({ kind: "invalid", error: "not JSON", problems: ["the response is not valid JSON"], usage });
export const timeout = (): AttemptOutcome => ({ kind: "timeout", error: "timed out", usage });
export const crash = (): AttemptOutcome => ({ kind: "crash", error: "the worker threw", usage });
