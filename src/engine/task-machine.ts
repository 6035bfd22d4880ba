/**
 * A task's state machine, as pure functions: `taskTransition(task, event, policy)` → the task's
 * next state and the effects the runner applies (the coordinator's JobRun; an in-memory runner in
 * the unit tests). No clock and no randomness of its own: both come in the event.
 *
 *   blocked ─ready→ pending ─dispatch→ running ─report→ done (succeeded, or failed for good)
 *                                              ├report→ waiting | pending (a retry; pending when due at once;
 *                                              │         pending on the next model of its chain when its model is unavailable)
 *                                              ├report→ child (an agent waits for its sub-session; the attempt goes on later)
 *                                              ├lost→ pending | done (quarantined: lost LOST_ATTEMPTS_MAX times, or out of attempts)
 *                                              ├hand→ running (its worker takes it; taken again: the call is re-sent, a lost attempt and a new one) | done
 *                                              ├withdraw→ pending (a batch line never sent: its attempt not counted)
 *                                              └release→ pending (the job paused or ended: the report will be stale)
 *   waiting ─due→ pending          child ─child-ended→ pending          any ─reset→ pending | blocked (recover)
 *   pending | blocked ─local→ done (the operator finished it itself)
 *   pending ─give-up→ done (failed with no attempt: it waited on its rate pacer past the job's max wait)
 *   pending ─fall-back→ pending (the same wait, with a next model in its chain: it goes there)
 *
 * What happens after an attempt is the retry policy's (./retry-policy.ts); this module adds what
 * the task's own facts say: how many attempts, losses and throttles it had, since when it waits
 * on rate limits. An event that does not apply to the task's state (a report for a task no longer
 * running) returns null: the runner ignores it. The moves the coordinator makes set-wise (every
 * due task at once, every running task at the job's end) are declared once (SET_WISE): this module
 * moves one task by them, the coordinator's store derives its statements from them.
 */
import { LOST_ATTEMPTS_MAX } from "./limits";
import { isThrottle, nextStep, type AttemptOutcome } from "./retry-policy";
import type { ErrorKind, SubtaskSpawn, TaskView } from "./types";

export type TaskPhase = TaskView["state"];

/** The facts the machine moves (the store keeps them in the task's columns). */
export interface TaskState {
  state: TaskPhase;
  /** Attempts sent, the one running included (throttled ones too: they do not count against max_retries). */
  attempts: number;
  /** Attempts that never reported (their worker or the whole runtime died). */
  losses: number;
  /** Attempts answered with a rate limit, and since when the task is throttled in a row (null: its last answer was no throttle). */
  throttles: number;
  throttledSince: number | null;
  /** When a waiting task may go again. */
  readyAt: number;
  slot: number | null;
  token: string | null;
  dispatchedAt: number | null;
  /**
   * How many times the running dispatch was handed to its worker (its claim, or the report's answer
   * that pulled it). A second hand means the first never reported — its worker restarted mid-call,
   * or the answer was lost — and the call is sent again.
   */
  handed: number;
  /** What was wrong with the last output: the next attempt's guidance. */
  problems: string[] | null;
  /**
   * Which model of its stage's chain the task calls (0: the stage's own; ../engine/fallbacks.ts):
   * one more each time its model was unavailable. Those attempts do not count against max_retries.
   */
  route: number;
}

/** The job's rules a task follows. */
export interface TaskPolicy {
  maxRetries: number;
  /** How long a task may wait on rate limits since its first throttle in a row (undefined: the default). */
  maxWaitMs: number | undefined;
  /** How many models the task's stage may call, its own first (undefined: 1, no fallbacks). */
  chain?: number;
}

export type TaskEvent =
  | { type: "ready" }
  /** Sent to a slot's worker, a session, or (slot null) as a line of a provider batch. */
  | { type: "dispatch"; slot: number | null; token: string; now: number; handed?: boolean }
  /** The task's worker takes the running dispatch (a call worker's claim, or a pulled task handed again). */
  | { type: "hand"; why: string; now: number }
  /** An attempt's outcome: a worker's report, or a batch line's answer. `random`: the backoff's jitter. */
  | { type: "report"; outcome: AttemptOutcome; now: number; random: () => number }
  | { type: "lost"; why: string }
  | { type: "withdraw" }
  | { type: "release" }
  | { type: "due"; now: number }
  | { type: "child-ended" }
  /** The operator finished the task itself, with no call (its output known from others'). */
  | { type: "local"; output: unknown }
  /** The task fails where it waits, without another attempt (its model's rate pacer granted nothing for longer than the job's max wait). */
  | { type: "give-up"; error: string; errorKind: ErrorKind }
  | { type: "reset"; blocked: boolean }
  /** The task's model is unavailable while it waits (its rate pacer granted nothing past the job's max wait): the next model of its chain. */
  | { type: "fall-back" };

/** How the task ended: its result is recorded and the operator told (the runner's `finish`). */
export interface TaskEnd {
  success: boolean;
  output: unknown;
  error: string | null;
  errorKind: ErrorKind | null;
}

export type TaskEffect =
  /** The slot the task ran on is free for another. */
  | { type: "free-slot"; slot: number }
  /** The task is due again at `at`: the job must wake by then. */
  | { type: "wake"; at: number }
  | { type: "finish"; end: TaskEnd }
  /** An agent asked for a child sub-session: start it; the parent's attempt is not counted until it is dispatched again. */
  | { type: "spawn"; spawn: SubtaskSpawn }
  /** The task's session must stop (its task ended without its own report). */
  | { type: "stop-session" }
  /** The running dispatch's call is sent again (its first never reported): one more attempt, and a call the provider may have billed. */
  | { type: "resent" };

export interface Transition {
  task: TaskState;
  effects: TaskEffect[];
}

/**
 * The moves the coordinator makes on many tasks in one statement (every due task, every running
 * task at the job's end, a blocked task readied with its input, a parent whose child ended): the
 * state a task must be in, and the facts it gets. `taskTransition` moves one task by these same
 * entries, and the store derives its statements from them (durable-objects/coordinator/store.ts).
 */
export const SET_WISE = {
  ready: { from: "blocked", to: { state: "pending" } },
  /** …once its readyAt has come. */
  due: { from: "waiting", to: { state: "pending" } },
  "child-ended": { from: "child", to: { state: "pending" } },
  /** The job paused or ended: the report will be stale. */
  release: { from: "running", to: { state: "pending", slot: null, token: null } },
} as const satisfies Record<string, { from: TaskPhase; to: Partial<TaskState> }>;

export type SetWiseMove = keyof typeof SET_WISE;

function setWise(task: TaskState, move: SetWiseMove): Transition | null {
  const { from, to } = SET_WISE[move];
  return task.state === from ? { task: { ...task, ...to }, effects: [] } : null;
}

/** A task as planned: nothing tried yet. */
export function freshTask(blocked = false): TaskState {
  return {
    state: blocked ? "blocked" : "pending",
    attempts: 0,
    losses: 0,
    throttles: 0,
    throttledSince: null,
    readyAt: 0,
    slot: null,
    token: null,
    dispatchedAt: null,
    handed: 0,
    problems: null,
    route: 0,
  };
}

/** The task after `event`, and what the runner must do; null when the event does not apply to the task's state. */
export function taskTransition(task: TaskState, event: TaskEvent, policy: TaskPolicy): Transition | null {
  switch (event.type) {
    case "ready":
      return setWise(task, "ready");
    case "dispatch":
      if (task.state !== "pending") return null;
      return {
        task: {
          ...task,
          state: "running",
          attempts: task.attempts + 1,
          slot: event.slot,
          token: event.token,
          dispatchedAt: event.now,
          handed: event.handed ? 1 : 0,
        },
        effects: [],
      };
    case "hand":
      if (task.state !== "running") return null;
      return task.handed === 0 ? { task: { ...task, handed: 1 }, effects: [] } : resend(task, event.why, event.now, policy);
    case "report":
      return task.state === "running" ? afterReport(task, event.outcome, event.now, event.random, policy) : null;
    case "lost":
      return task.state === "running" ? afterLoss(task, event.why, policy) : null;
    case "withdraw":
      if (task.state !== "running") return null;
      return { task: { ...idle(task), state: "pending", attempts: Math.max(0, task.attempts - 1) }, effects: freed(task) };
    case "release": {
      const released = setWise(task, "release");
      return released && { ...released, effects: freed(task) };
    }
    case "due":
      return task.readyAt <= event.now ? setWise(task, "due") : null;
    case "child-ended":
      return setWise(task, "child-ended");
    case "local":
      if (task.state !== "pending" && task.state !== "blocked") return null;
      return { task: { ...task, state: "done" }, effects: [{ type: "finish", end: { success: true, output: event.output, error: null, errorKind: null } }] };
    case "give-up":
      if (task.state !== "pending") return null;
      return {
        task: { ...task, state: "done" },
        effects: [{ type: "finish", end: { success: false, output: null, error: event.error, errorKind: event.errorKind } }],
      };
    case "reset":
      return { task: resetTask(task, event.blocked), effects: freed(task) };
    case "fall-back":
      return task.state === "pending" && task.route + 1 < (policy.chain ?? 1)
        ? { task: { ...task, route: task.route + 1, throttledSince: null }, effects: [] }
        : null;
  }
}

/**
 * A task to run again from scratch (a recover): blocked if it was (or `blocked`), its losses kept —
 * a recovered poison item (quarantined after LOST_ATTEMPTS_MAX) gets one more chance, not two.
 */
export function resetTask(task: TaskState, blocked: boolean): TaskState {
  return { ...freshTask(blocked || task.state === "blocked"), losses: task.losses };
}

/** The task holds nothing any more: no slot, no token. */
function idle(task: TaskState): TaskState {
  return { ...task, slot: null, token: null };
}

function freed(task: TaskState): TaskEffect[] {
  return task.state === "running" && task.slot !== null ? [{ type: "free-slot", slot: task.slot }] : [];
}

function afterReport(task: TaskState, outcome: AttemptOutcome, now: number, random: () => number, policy: TaskPolicy): Transition {
  const effects = freed(task);
  const unavailable = outcome.kind === "transient" || outcome.kind === "permanent" ? outcome.unavailable : undefined;
  const chain = policy.chain ?? 1;
  // Its model cannot answer: the next model of its chain, at once (that model's pacing says when);
  // the attempt does not count against max_retries, and a throttled run starts afresh there.
  const fallBack: Transition = { task: { ...idle(task), state: "pending", route: task.route + 1, throttledSince: null }, effects };
  if (unavailable && task.route + 1 < chain) return fallBack;
  const wait = { throttles: task.throttles, since: task.throttledSince, maxWaitMs: policy.maxWaitMs, now };
  const step = nextStep(outcome, task.attempts - task.route, policy.maxRetries, random, wait);
  // Rate limited past the job's max wait: its model cannot take it in time, the next one may.
  if (step.step === "fail" && step.errorKind === "rate_limited" && task.route + 1 < chain) return fallBack;
  const throttled = isThrottle(outcome);
  // A throttle adds to the task's run of them (its first starts it); any other answer ends the run.
  const throttles = { throttles: task.throttles + (throttled ? 1 : 0), throttledSince: throttled ? (task.throttledSince ?? now) : null };
  switch (step.step) {
    case "succeed":
      return {
        task: { ...idle(task), ...throttles, state: "done" },
        effects: [...effects, { type: "finish", end: { success: true, output: step.output, error: null, errorKind: null } }],
      };
    case "fail": {
      // Every model of its chain was tried and the last could not answer either.
      const errorKind = unavailable && chain > 1 ? "unavailable" : step.errorKind;
      return {
        task: { ...idle(task), ...throttles, state: "done" },
        effects: [...effects, { type: "finish", end: { success: false, output: null, error: step.error, errorKind } }],
      };
    }
    case "spawn":
      // The attempt goes on when the parent is dispatched again: not counted twice.
      return { task: { ...idle(task), state: "child", attempts: task.attempts - 1 }, effects: [...effects, { type: "spawn", spawn: step.spawn }] };
    case "retry": {
      const readyAt = now + step.delayMs;
      const next: TaskState = { ...idle(task), ...throttles, state: step.delayMs > 0 ? "waiting" : "pending", readyAt, problems: step.guidance };
      return { task: next, effects: step.delayMs > 0 ? [...effects, { type: "wake", at: readyAt }] : effects };
    }
  }
}

/**
 * A dispatch that will never report: it counts as an attempt (it was counted when dispatched);
 * the last allowed one fails the task (`internal`). A task lost LOST_ATTEMPTS_MAX times is
 * quarantined whatever its max_retries: its attempts may be what takes the runtime down, and
 * every runtime in the deployment shares that fate with it.
 */
function afterLoss(task: TaskState, why: string, policy: TaskPolicy): Transition {
  const losses = task.losses + 1;
  const effects = freed(task);
  if (task.attempts < 1 + policy.maxRetries && losses < LOST_ATTEMPTS_MAX) return { task: { ...idle(task), state: "pending", losses }, effects };
  const error = `The attempt was lost ${losses} time${losses === 1 ? "" : "s"} (${why}); the task is not retried again.`;
  const end: TaskEnd = { success: false, output: null, error, errorKind: "internal" };
  return { task: { ...idle(task), state: "done", losses }, effects: [...effects, { type: "stop-session" }, { type: "finish", end }] };
}

/**
 * The running dispatch is handed to its worker again: the first hand never reported (a restart
 * mid-call), so its attempt is lost, and the call goes again at once on the same slot and token —
 * one more attempt, as a loss and a new dispatch would count it. A task out of attempts or lost
 * LOST_ATTEMPTS_MAX times ends as a loss does (the worker gets nothing to run).
 */
function resend(task: TaskState, why: string, now: number, policy: TaskPolicy): Transition {
  const lost = afterLoss(task, why, policy);
  if (lost.task.state === "done") return lost;
  return {
    task: { ...task, losses: lost.task.losses, attempts: task.attempts + 1, dispatchedAt: now, handed: task.handed + 1 },
    effects: [{ type: "resent" }],
  };
}
