/**
 * JobCoordinator: one per job. Runs any operator's plan of stages (src/engine/types.ts): it owns
 * dispatch (at most `concurrency` attempts in flight), the task state machine, the token budget,
 * the event log and live SSE streams, the outbox to D1, recover/resume and completion. It knows
 * no operator: after every finished task it asks the job's operator which tasks become ready and
 * whether the job has ended.
 *
 * A task's life is the task machine's (../src/engine/task-machine.ts: its states, the retries, a
 * lost or re-sent attempt, quarantine); the job's, the job machine's (../src/engine/job-machine.ts:
 * queued → running ⇄ paused → completed | failed | cancelled, recover back to running). A retry
 * that waits holds no slot.
 *
 * The coordinator's storage is the truth; the Queue is only a timer. The alarm sweeps while the
 * job runs, so a lost Queue message or a restarted server loses nothing, and each task ends with
 * one result (D1's primary key on (job_id, stage, idx) enforces it too).
 *
 * This class is the RPC surface (the job's owner, its workers, the alarm); the job it runs, with
 * its in-memory state and the engine that moves it on, is a JobRun (./coordinator/job-run.ts).
 */
import { DurableObject } from "cloudflare:workers";
import { handOver, slotTask } from "./coordinator/hand-over";
import { sseKeepaliveMs } from "../src/config";
import type { AttemptOutcome } from "../src/engine/retry-policy";
import { type JobSpecBase, type PulledTask, type PullRequest, type StageWork, type TaskClaim, type TaskRef, setupKey } from "../src/engine/types";
import { jobSpec, operatorFor } from "../src/operators/registry";
import type { BudgetChange, RecoverOptions, RecoverAnswer, ResumeAnswer } from "../src/engine/recovery";
import { EventHub } from "./coordinator/event-hub";
import { CoordinatorStore } from "./coordinator/store";
import { ZERO } from "../src/engine/counters";
import { JobRun } from "./coordinator/job-run";
import { cancelJob, recoverJob, resumeJob } from "./coordinator/lifecycle";
import { TurnBatch } from "./coordinator/turn-batch";

export class JobCoordinator extends DurableObject<Env> {
  #hub: EventHub; // live SSE streams: they outlive a purge's fresh run
  #store!: CoordinatorStore;
  #run: JobRun | null = null; // the job, once it has a spec (null: never started, or purged)
  #reports = new TurnBatch<PulledTask | null>();
  readonly #waiters: (() => void)[] = []; // callers of waitForEnd: the run resolves them at its end (one that starts later too)

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#hub = new EventHub(sseKeepaliveMs(env));
    void ctx.blockConcurrencyWhile(async () => {
      this.#store = new CoordinatorStore(ctx.storage);
      const spec = this.#store.getMeta("spec");
      if (spec) this.#run = new JobRun(ctx, env, { hub: this.#hub, store: this.#store, waiters: this.#waiters }, spec, await ctx.storage.getAlarm());
    });
  }

  // ── RPC: the job's owner ──────────────────────────────────────────────────────────────────

  /** Stores the job's plan and schedules its start; a second call for the same job does nothing. */
  async start(submitted: JobSpecBase, inputs: unknown[]): Promise<void> {
    if (this.#run) return;
    const spec = jobSpec(submitted);
    const plan = operatorFor(spec).plan(spec, inputs);
    const store = this.#store;
    store.transaction(() => {
      store.setMeta("spec", spec);
      store.setMeta("status", "queued");
      store.setMeta("counters", ZERO);
      store.setMeta("round", 1);
      store.insertStages(plan.stages);
      store.insertTasks(plan.tasks);
    });
    const run = (this.#run = new JobRun(this.ctx, this.env, { hub: this.#hub, store, waiters: this.#waiters }, spec, null));
    // A credential's model already throttled: the job starts at its share (the limiter is the
    // credential's, read as the job joins its pacer); and its workers are a block of the tenant's
    // warm ones. Asked here, before the alarm that starts the job, so the first dispatch never
    // waits on another object.
    await Promise.all([run.joinLimits(spec, 0), run.workers.lease(spec, 1)]);
    run.wake(Date.now());
  }

  /** The job ends `cancelled`; false when it has ended already (./coordinator/lifecycle.ts). */
  async cancel(): Promise<boolean> {
    const run = this.#run;
    return run ? cancelJob(run) : false;
  }

  /** Re-runs the failed and unfinished tasks of an ended job, keeping every finished one (./coordinator/lifecycle.ts). */
  async recover(options: RecoverOptions): Promise<RecoverAnswer> {
    return this.#run ? recoverJob(this.#run, options) : { ok: false, reason: "not_found" };
  }

  /** A paused job goes on, with a new budget total if given (./coordinator/lifecycle.ts). */
  async resume(change: BudgetChange | null): Promise<ResumeAnswer> {
    return this.#run ? resumeJob(this.#run, change) : { ok: false, reason: "not_found" };
  }

  /** Resolves true once the job has ended, or false after `timeoutMs`. */
  async waitForEnd(timeoutMs: number): Promise<boolean> {
    if (this.#run?.finalized) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Whether the job may still dispatch to the workers it borrowed (its pool asks about old leases). */
  async holdsWorkers(): Promise<boolean> {
    return this.#run !== null && !this.#run.finalized;
  }

  /** GET /events (SSE), with `Last-Event-ID` for resumption. */
  override async fetch(request: Request): Promise<Response> {
    const lastId = Number(request.headers.get("last-event-id") ?? "0");
    const after = Number.isInteger(lastId) && lastId > 0 ? lastId : 0;
    return this.#hub.open(this.#store.events.after(after), this.#run?.finalized ?? false);
  }

  // ── RPC: workers ──────────────────────────────────────────────────────────────────────────

  /** What a stage's workers run (fetched once per worker and job). */
  async work(stage: string, route = 0): Promise<StageWork | null> {
    return this.#run?.work(stage, route) ?? null;
  }

  /**
   * The inputs of a current dispatch, or null when the dispatch is stale (do no work); with the
   * stage's setup when asked. `unanswered`: the worker's previous claim or report threw in its
   * current life, so a claim repeated now follows no call (a repeated claim otherwise re-sends a
   * call cut short by a restart: counted, ./coordinator/hand-over.ts).
   */
  async claim(stage: string, index: number, token: string, wantSetup = false, unanswered = false): Promise<TaskClaim | null> {
    const run = this.#run;
    const task = run?.tasks.dispatchOf(stage, index, token);
    if (!run || !task) return null;
    if (!(await handOver(run, task, !unanswered))) return null; // taken before: its call is re-sent, counted; or the task ended
    const claim = run.claimOf(task);
    return wantSetup ? { ...claim, setup: await run.setup(stage, task.route) } : claim;
  }

  /**
   * A worker's report of one attempt. Reports for a dispatch that is no longer current are ignored.
   * With `pull`, a call worker's slot gets its next task in the answer (claimed already), which
   * saves the `begin`, the worker's alarm and the `claim` of a dispatch: one RPC per attempt.
   * Reports that arrive together (a round of calls ending at once) are settled in one turn, so
   * their writes are one commit (./coordinator/turn-batch.ts).
   */
  report(ref: Pick<TaskRef, "stage" | "index" | "token">, outcome: AttemptOutcome, pull: PullRequest | null = null): Promise<PulledTask | null> {
    return this.#reports.add(() => this.#settleReport(ref, outcome, pull));
  }

  async #settleReport(ref: Pick<TaskRef, "stage" | "index" | "token">, outcome: AttemptOutcome, pull: PullRequest | null): Promise<PulledTask | null> {
    const run = this.#run;
    if (!run) return null;
    const task = run.tasks.dispatchOf(ref.stage, ref.index, ref.token);
    const live = run.status === "running" || run.status === "paused";
    if (!live || !task) {
      // A realtime call of a task whose batch line answered first (execution mode auto): billed for nothing.
      const moved = live ? run.store.task(ref.stage, ref.index) : null;
      if (moved?.batch_id && !ref.token.startsWith("batch:")) run.billedForNothing(moved, outcome, "realtime");
      // A stale report. From a call worker that asks to pull, it may be a report repeated because
      // the answer handing over the slot's next task was lost: that task is handed again.
      if (pull?.slot === undefined || pull.round === undefined) return null;
      const again = await slotTask(run, pull.slot, pull.round, !pull.unanswered);
      return again && this.#withSetup(run, again, pull);
    }
    const pullSlot = pull && task.slot !== null && !task.session_id ? task.slot : null;
    const next = await run.settleReport(run.spec, task, outcome, pullSlot);
    if (!next || !pull) return null;
    return this.#withSetup(run, next, pull);
  }

  /** A pulled task, with its stage's setup unless the worker holds it already. */
  async #withSetup(run: JobRun, next: PulledTask, pull: PullRequest): Promise<PulledTask> {
    const { round, stage, route, tier, deployment } = next.ref;
    return pull.have.includes(setupKey(round, stage, route, tier, deployment)) ? next : { ...next, setup: await run.setup(stage, route ?? 0) };
  }

  /**
   * The job is deleted: its storage (tasks, events, outbox) and alarm go, and this object forgets
   * it. Answers the size of its worker pool, whose objects the caller purges too.
   */
  async purge(): Promise<{ workers: string[] }> {
    const run = this.#run;
    const workers = run ? run.workers.names(run.spec) : [];
    if (run) {
      await run.workers.release(run.spec, Number.MAX_SAFE_INTEGER);
      await run.mirror.stop();
    }
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    // An empty object again (its tables made anew): a late call finds no job, as for an unknown id.
    this.#run = null;
    this.#store = new CoordinatorStore(this.ctx.storage);
    this.#hub.closeAll();
    return { workers };
  }

  /** Called by the Queue consumer when a backoff is over. */
  async wake(): Promise<void> {
    const run = this.#run;
    if (!run || run.status !== "running") return;
    run.store.releaseDue(Date.now());
    await run.dispatchAndSettle();
  }

  override async alarm(): Promise<void> {
    await this.#run?.alarm();
  }
}
