/**
 * A job's state machine, as pure functions: `jobTransition(job, event)` → the job's next state and
 * the effects its runner applies (durable-objects/coordinator/lifecycle.ts), or the reason the
 * event is refused (what the API answers with a 409).
 *
 *   queued ─begin→ running ⇄ paused (pause: the budget cannot fit the next call, or the provider's quota is spent; resume)
 *   queued | running | paused ─end→ completed | failed | cancelled ─finalize→ (finalized: MAP_COMPLETED sent)
 *   completed | failed | cancelled, finalized ─recover→ running (a new round)
 *
 * The task machine (./task-machine.ts) moves the tasks; this one only says what a job's change
 * asks of them (release the running ones, stop sessions, cancel provider batches) and of the
 * world (events, the shared limiters, the workers, the webhook).
 */
import { isTerminal, type JobStatus } from "./types";

export type EndStatus = Extract<JobStatus, "completed" | "failed" | "cancelled">;

/** Why a running job paused: its budget cannot fit the next call, or its provider credential's quota is spent. */
export type PauseReason = "budget_exhausted" | "provider_quota";

export interface JobState {
  status: JobStatus;
  /** The end is complete: MAP_COMPLETED stored and sent, the shared objects left. */
  finalized: boolean;
}

export type JobEvent =
  | { type: "begin" }
  | { type: "pause"; reason: PauseReason }
  | { type: "resume" }
  | { type: "end"; status: EndStatus }
  | { type: "finalize" }
  | { type: "recover" };

export type JobEffect =
  /** The job's event of this change (its data is the runner's). */
  | { type: "emit"; event: "MAP_STARTED" | "JOB_PAUSED" | "JOB_RESUMED" | "JOB_RECOVERING" | "MAP_COMPLETED" }
  /** Fill free slots with ready tasks. */
  | { type: "dispatch" }
  /** The operator says what comes first (its advance with no finished task); the stages with work start, and their tasks go out. */
  | { type: "advance" }
  /** Nothing more may be spent: sub-sessions stop after their turn, open provider batches are cancelled. */
  | { type: "stop-spending"; cancelBatches: boolean }
  /** Running tasks give their slots back (the task machine's `release`); the stages close as `closeAs`. */
  | { type: "release-tasks"; closeAs: "completed" | "failed" }
  /** Attempts still under way produce no result: the job's count becomes that of its results. */
  | { type: "count-results-attempts" }
  | { type: "stamp-end" }
  /** The job leaves the shared objects (pacer, limiter, workers) and wakes whoever waits for its end. */
  | { type: "leave" }
  /** A recover: the next round (its own workers and attempts), the end's marks cleared. */
  | { type: "new-round" };

export type JobStep = { ok: true; job: JobState; effects: JobEffect[] } | { ok: false; reason: string };

const refuse = (reason: string): JobStep => ({ ok: false, reason });

export function jobTransition(job: JobState, event: JobEvent): JobStep {
  const { status } = job;
  switch (event.type) {
    case "begin":
      if (status !== "queued") return refuse(`The job is ${status}; only a queued job begins.`);
      return { ok: true, job: { ...job, status: "running" }, effects: [{ type: "emit", event: "MAP_STARTED" }, { type: "advance" }] };
    case "pause":
      if (status !== "running") return refuse(`The job is ${status}; only a running job pauses.`);
      return { ok: true, job: { ...job, status: "paused" }, effects: [{ type: "emit", event: "JOB_PAUSED" }] };
    case "resume":
      if (status !== "paused") return refuse(`The job is ${status}, not paused.`);
      return { ok: true, job: { ...job, status: "running" }, effects: [{ type: "emit", event: "JOB_RESUMED" }, { type: "dispatch" }] };
    case "end": {
      if (isTerminal(status)) return refuse(`The job has ended already (${status}).`);
      const completed = event.status === "completed";
      const effects: JobEffect[] = [
        { type: "stop-spending", cancelBatches: !completed },
        { type: "release-tasks", closeAs: completed ? "completed" : "failed" },
        ...(event.status === "cancelled" ? [{ type: "count-results-attempts" } as const] : []),
        { type: "stamp-end" },
      ];
      return { ok: true, job: { status: event.status, finalized: false }, effects };
    }
    case "finalize":
      if (!isTerminal(status)) return refuse(`The job is ${status}; only an ended job is finalized.`);
      if (job.finalized) return refuse("The job's end is final already.");
      return { ok: true, job: { ...job, finalized: true }, effects: [{ type: "emit", event: "MAP_COMPLETED" }, { type: "leave" }] };
    case "recover":
      if (!isTerminal(status) || !job.finalized) return refuse("The job is still running or paused; only an ended job can be recovered.");
      return {
        ok: true,
        job: { status: "running", finalized: false },
        effects: [{ type: "new-round" }, { type: "emit", event: "JOB_RECOVERING" }, { type: "advance" }],
      };
  }
}
