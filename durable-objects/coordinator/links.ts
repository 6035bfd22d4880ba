/**
 * A job's links to the objects shared across jobs: adaptive concurrency (./concurrency.ts) and the
 * rate pacers of its models (./pacings.ts). Their answers come back as the job's events (CONCURRENCY_CHANGED,
 * PACING_CHANGED, never after its end) and as dispatches when room opens.
 */
import { isTerminal } from "../../src/engine/types";
import { executorOf } from "../../src/engine/executors";
import { taskVars } from "./claims";
import { ConcurrencyLink } from "./concurrency";
import type { PacedJob } from "./pacing";
import { Pacings } from "./pacings";
import type { JobStatus, Operator } from "../../src/engine/types";
import type { JobSpec } from "../../src/operators/registry";
import type { BudgetKeeper } from "./budget";
import type { D1Mirror } from "./d1-mirror";
import type { JobLog } from "./job-log";
import type { CoordinatorStore } from "./store";

/** What the links need of their job (./job-run.ts). */
interface LinkedJob {
  readonly env: Env;
  readonly store: CoordinatorStore;
  readonly log: JobLog;
  readonly mirror: D1Mirror;
  readonly budget: BudgetKeeper;
  readonly op: Operator;
  readonly busySlots: Set<number>;
  readonly spec: JobSpec;
  readonly status: JobStatus;
  dispatchAndSettle(): Promise<unknown>;
  batchStages(): string[];
}

const dispatchAgain = (run: LinkedJob, after: string) => () =>
  void run.dispatchAndSettle().catch((err: unknown) => console.error(`dispatch after ${after} failed; the sweep dispatches`, err));

export function concurrencyLink(run: LinkedJob): ConcurrencyLink {
  return new ConcurrencyLink(
    run.env,
    run.store,
    (cap, reason) => {
      if (isTerminal(run.status)) return; // the limiter answered after the end: MAP_COMPLETED stays the last event
      run.log.emit("CONCURRENCY_CHANGED", { job_id: run.spec.jobId, effective_concurrency: cap, reason });
      run.mirror.schedule();
    },
    {
      inFlight: () => run.busySlots.size,
      roomOpened: dispatchAgain(run, "the pacing"),
    },
  );
}

/** How many of the next pending tasks a link looks at for its model's next call (a cost estimate; none: a request's cost). */
const NEXT_CALL_LOOK = 16;

/** The job's links to the rate pacers of the models it calls (./pacings.ts). */
export function pacingLinks(run: LinkedJob): Pacings {
  const jobFor = (model: string): PacedJob => ({
    nextCall: () => {
      const spec = run.spec;
      for (const row of run.store.nextPending(NEXT_CALL_LOOK, run.batchStages())) {
        const work = run.op.work(spec, run.store.workStage(row.stage));
        const executor = executorOf(work);
        if (!executor.paced || executor.call(work).model !== model) continue;
        return { prompt: run.budget.promptEstimate(row.stage, work, taskVars(spec, run.op, run.store, row)), maxTokens: executor.call(work).maxTokens };
      }
      return null;
    },
    roomOpened: dispatchAgain(run, "a lease"),
    inFlight: () => run.busySlots.size,
  });
  return new Pacings(
    run.env,
    run.store,
    () => run.spec,
    jobFor,
    (pacing) => {
      if (isTerminal(run.status)) return;
      run.log.emit("PACING_CHANGED", { job_id: run.spec.jobId, pacing });
      run.mirror.schedule();
    },
  );
}
