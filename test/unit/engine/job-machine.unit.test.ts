/**
 * The job state machine (src/engine/job-machine.ts): every event from every state — allowed with
 * its effects, or refused with the reason the API answers — and a job's life as a sequence.
 */
import { describe, expect, it } from "vitest";
import { jobTransition, type JobEvent, type JobState } from "../../../src/engine/job-machine";
import type { JobStatus } from "../../../src/engine/types";

const statuses: JobStatus[] = ["queued", "running", "paused", "completed", "failed", "cancelled"];
const events: JobEvent[] = [
  { type: "begin" },
  { type: "pause", reason: "budget_exhausted" },
  { type: "resume" },
  { type: "end", status: "completed" },
  { type: "end", status: "cancelled" },
  { type: "finalize" },
  { type: "recover" },
];

/** The state each event leads to from each state and finalization, `refused` where it does not apply. */
function table(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const status of statuses) {
    for (const finalized of [false, true]) {
      if (finalized && (status === "queued" || status === "running" || status === "paused")) continue;
      for (const event of events) {
        const step = jobTransition({ status, finalized }, event);
        const name = event.type === "end" ? `end:${event.status}` : event.type;
        out[`${status}${finalized ? "+final" : ""} ${name}`] = step.ok ? `${step.job.status}${step.job.finalized ? "+final" : ""}` : "refused";
      }
    }
  }
  return out;
}

describe("job transitions", () => {
  it("allows exactly the contract's changes: queued → running ⇄ paused → ended → finalized → recovered", () => {
    const allowed = Object.entries(table()).filter(([, to]) => to !== "refused");
    expect(Object.fromEntries(allowed)).toEqual({
      "queued begin": "running",
      "queued end:completed": "completed",
      "queued end:cancelled": "cancelled",
      "running pause": "paused",
      "running end:completed": "completed",
      "running end:cancelled": "cancelled",
      "paused resume": "running",
      "paused end:completed": "completed",
      "paused end:cancelled": "cancelled",
      "completed finalize": "completed+final",
      "failed finalize": "failed+final",
      "cancelled finalize": "cancelled+final",
      "completed+final recover": "running",
      "failed+final recover": "running",
      "cancelled+final recover": "running",
    });
  });

  it("refuses with the reasons the API answers", () => {
    expect(jobTransition({ status: "running", finalized: false }, { type: "resume" })).toEqual({ ok: false, reason: "The job is running, not paused." });
    expect(jobTransition({ status: "paused", finalized: false }, { type: "recover" })).toEqual({
      ok: false,
      reason: "The job is still running or paused; only an ended job can be recovered.",
    });
    // Ended but its end not final yet (MAP_COMPLETED not sent): not recoverable until it is.
    expect(jobTransition({ status: "failed", finalized: false }, { type: "recover" }).ok).toBe(false);
    expect(jobTransition({ status: "cancelled", finalized: true }, { type: "end", status: "cancelled" })).toEqual({
      ok: false,
      reason: "The job has ended already (cancelled).",
    });
    expect(jobTransition({ status: "completed", finalized: true }, { type: "finalize" })).toEqual({ ok: false, reason: "The job's end is final already." });
  });

  it("says what each change asks of the tasks and the world", () => {
    const effects = (job: JobState, event: JobEvent) => {
      const step = jobTransition(job, event);
      return step.ok ? step.effects : null;
    };
    expect(effects({ status: "queued", finalized: false }, { type: "begin" })).toEqual([{ type: "emit", event: "MAP_STARTED" }, { type: "advance" }]);
    expect(effects({ status: "running", finalized: false }, { type: "pause", reason: "budget_exhausted" })).toEqual([{ type: "emit", event: "JOB_PAUSED" }]);
    expect(effects({ status: "paused", finalized: false }, { type: "resume" })).toEqual([{ type: "emit", event: "JOB_RESUMED" }, { type: "dispatch" }]);
    // A completed job's batches are all answered; a failed or cancelled one's are cancelled, and a cancel counts only the results' attempts.
    expect(effects({ status: "running", finalized: false }, { type: "end", status: "completed" })).toEqual([
      { type: "stop-spending", cancelBatches: false },
      { type: "release-tasks", closeAs: "completed" },
      { type: "stamp-end" },
    ]);
    expect(effects({ status: "paused", finalized: false }, { type: "end", status: "cancelled" })).toEqual([
      { type: "stop-spending", cancelBatches: true },
      { type: "release-tasks", closeAs: "failed" },
      { type: "count-results-attempts" },
      { type: "stamp-end" },
    ]);
    expect(effects({ status: "failed", finalized: false }, { type: "finalize" })).toEqual([{ type: "emit", event: "MAP_COMPLETED" }, { type: "leave" }]);
    expect(effects({ status: "failed", finalized: true }, { type: "recover" })).toEqual([
      { type: "new-round" },
      { type: "emit", event: "JOB_RECOVERING" },
      { type: "advance" },
    ]);
  });

  it("a job's life: begins, pauses on its budget, resumes, fails, is finalized, recovered, completes", () => {
    const life: JobEvent[] = [
      { type: "begin" },
      { type: "pause", reason: "budget_exhausted" },
      { type: "resume" },
      { type: "end", status: "failed" },
      { type: "finalize" },
      { type: "recover" },
      { type: "end", status: "completed" },
      { type: "finalize" },
    ];
    let job: JobState = { status: "queued", finalized: false };
    const seen: string[] = [];
    for (const event of life) {
      const step = jobTransition(job, event);
      if (!step.ok) throw new Error(step.reason);
      job = step.job;
      seen.push(`${job.status}${job.finalized ? "+final" : ""}`);
    }
    expect(seen).toEqual(["running", "paused", "running", "failed", "failed+final", "running", "completed", "completed+final"]);
  });
});
