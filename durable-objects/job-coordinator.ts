/**
 * JobCoordinator: one per job. Runs any operator's plan of stages (src/engine/types.ts): it owns
 * dispatch (at most `concurrency` attempts in flight), the task state machine, the token budget,
 * the event log and live SSE streams, the outbox to D1, recover/resume and completion. It knows
 * no operator: after every finished task it asks the job's operator which tasks become ready and
 * whether the job has ended.
 *
 * Task states (./coordinator/store.ts):
 *   blocked ──(operator: inputs ready)──▶ pending ──dispatch──▶ running ──report──▶ done
 *                                           ▲                     │ └─(lost: no report in time, or dispatch failed)─▶ pending
 *                                           └──── waiting ◀───────┘ retry with backoff (Queue message + alarm sweep)
 * A lost dispatch counts as an attempt: after 1 + max_retries of them the task fails `internal`.
 * Job status: queued → running ⇄ paused (budget) → completed | failed | cancelled; recover takes an
 * ended job back to running. A retry that waits holds no slot.
 *
 * The coordinator's storage is the truth; the Queue is only a timer. The alarm sweeps while the
 * job runs, so a lost Queue message or a restarted server loses nothing, and each task ends with
 * one result (D1's primary key on (job_id, stage, idx) enforces it too).
 *
 * This class is the RPC surface (the job's owner, its workers, the alarm); the job it runs, with
 * its in-memory state and the engine that moves it on, is a JobRun (./coordinator/job-run.ts).
 */
import { DurableObject } from "cloudflare:workers";
import { sseKeepaliveMs } from "../src/config";
import { newId } from "../src/lib/ids";
import type { AttemptOutcome } from "../src/engine/retry-policy";
import { isTerminal, type PulledTask, type PullRequest, type StageWork, type TaskClaim, type TaskRef, setupKey } from "../src/engine/types";
import { operatorFor, type JobSpec } from "../src/operators/registry";
import { withOverrides, type RecoverOptions, type RecoverAnswer, type ResumeAnswer } from "../src/engine/recovery";
import { EventHub } from "./coordinator/event-hub";
import { CoordinatorStore, type TaskRow } from "./coordinator/store";
import { ZERO } from "../src/engine/counters";
import { JobRun, SWEEP_INTERVAL_MS, type Puller } from "./coordinator/job-run";
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
  async start(spec: JobSpec, inputs: unknown[]): Promise<void> {
    if (this.#run) return;
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
    // A tenant's model already throttled: the job starts at its share; and its workers are a block
    // of the tenant's warm ones. Asked here, before the alarm that starts the job, so the first
    // dispatch never waits on another object.
    await Promise.all([run.concurrency.join(spec, 0), run.workers.lease(spec, 1), run.joinPacer(spec)]);
    await run.wakeAt(Date.now());
  }

  async cancel(): Promise<boolean> {
    const run = this.#run;
    if (!run || isTerminal(run.status)) return false;
    await run.finish("cancelled");
    return true;
  }

  /** Re-runs the failed and unfinished tasks of an ended job, keeping every finished one. */
  async recover(options: RecoverOptions): Promise<RecoverAnswer> {
    const run = this.#run;
    if (!run) return { ok: false, reason: "not_found" };
    const { spec, op, store } = run;
    if (!isTerminal(run.status) || !run.finalized) return { ok: false, reason: "The job is still running or paused; only an ended job can be recovered." };
    const candidates = store.recoverable(options.errorKinds);
    const redo = op.redoAfter?.(spec, run.reader(), candidates.map((r) => ({ stage: r.stage, index: r.idx }))) ?? { rerun: [], drop: [] };
    const skipped = new Set((redo.skip ?? []).map((t) => `${t.stage}:${t.index}`));
    const rows = candidates.filter((r) => !skipped.has(`${r.stage}:${r.idx}`));
    if (rows.length === 0) return { ok: false, reason: "The job has no failed or unfinished task to re-run." };
    const listed = new Set(rows.map((r) => `${r.stage}:${r.idx}`));
    const rerun = redo.rerun
      .filter((t) => !listed.has(`${t.stage}:${t.index}`))
      .map((t) => store.task(t.stage, t.index))
      .filter((t): t is TaskRow => t !== undefined);
    const updated = withOverrides(spec, options);
    store.transaction(() => {
      const reopened = store.reopen(rows, rerun, () => newId("ses"));
      const dropped = redo.drop.map((stage) => store.dropStage(stage));
      const succeeded = reopened.succeeded + dropped.reduce((n, d) => n + d.succeeded, 0);
      const failed = reopened.failed + dropped.reduce((n, d) => n + d.failed, 0);
      run.log.bump({ completed: -(succeeded + failed), succeeded: -succeeded, failed: -failed });
      if (redo.drop.length > 0) store.setMeta("d1_drop_stages", redo.drop); // their stored results go too
      store.setMeta("spec", updated);
      store.setMeta("round", run.round() + 1);
      store.setMeta("completed_at", null);
      store.setMeta("error", null);
      store.setMeta("finalized", false);
      store.setMeta("webhook_settled", false);
      run.setStatus("running");
      run.log.emit("JOB_RECOVERING", { job_id: spec.jobId, tasks: rows.length });
    });
    run.spec = updated;
    run.finalized = false;
    run.budget.respec();
    await run.workers.lease(updated, run.round()); // before the first dispatch of the new round
    run.startStagesWithWork();
    await run.afterChange(op.advance(updated, run.reader(), null));
    await run.mirror.flush(); // D1 says `running` before the caller hears 202
    return { ok: true, recovering: rows.length + rerun.length };
  }

  /** A paused job goes on, with a new budget total if given. */
  async resume(budgetTotal: number | null): Promise<ResumeAnswer> {
    const run = this.#run;
    if (!run) return { ok: false, reason: "not_found" };
    const spec = run.spec;
    if (run.status !== "paused") return { ok: false, reason: `The job is ${run.status}, not paused.` };
    if (spec.budget) {
      // A total at or below what is spent would pause the job again at once: say so, with the numbers.
      const { spent, reserved } = run.budget.view(spec.budget) ?? { spent: 0, reserved: 0 };
      const total = budgetTotal ?? spec.budget.total;
      if (total <= spent + reserved) {
        const message = `token_budget.total ${total} is not above what the job has spent (${spent} tokens${reserved > 0 ? `, ${reserved} reserved` : ""}); resume with a total above ${spent + reserved}.`;
        return { ok: false, reason: `The job cannot go on: ${message}`, details: [{ path: "token_budget.total", message }] };
      }
    }
    if (budgetTotal !== null && spec.budget) {
      const updated: JobSpec = { ...spec, budget: { ...spec.budget, total: budgetTotal } };
      run.store.setMeta("spec", updated);
      run.spec = updated;
    }
    run.store.transaction(() => {
      run.setStatus("running");
      run.store.setMeta("pause_reason", null);
      run.log.emit("JOB_RESUMED", { job_id: spec.jobId });
    });
    await run.dispatchAndSettle();
    await run.wakeAt(Date.now() + SWEEP_INTERVAL_MS);
    await run.mirror.flush(); // D1 says `running` before the caller hears 202
    return { ok: true };
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
  async work(stage: string): Promise<StageWork | null> {
    const run = this.#run;
    return run ? run.op.work(run.spec, run.store.workStage(stage)) : null;
  }

  /** The inputs of a current dispatch, or null when the dispatch is stale (do no work); with the stage's setup when asked. */
  async claim(stage: string, index: number, token: string, wantSetup = false): Promise<TaskClaim | null> {
    const run = this.#run;
    const task = run?.store.task(stage, index);
    if (!run || !task || task.state !== "running" || task.token !== token) return null;
    const claim = run.claimOf(task);
    return wantSetup ? { ...claim, setup: await run.setup(stage) } : claim;
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
    const task = run.store.task(ref.stage, ref.index);
    const live = run.status === "running" || run.status === "paused";
    if (!live || !task || task.state !== "running" || task.token !== ref.token) {
      // A stale report. From a call worker that asks to pull, it may be a report repeated because
      // the answer handing over the slot's next task was lost: that task is handed again.
      if (pull?.slot === undefined || pull.round === undefined) return null;
      const again = run.slotTask(pull.slot, pull.round);
      return again && this.#withSetup(run, again, pull);
    }
    if (task.slot !== null) run.busySlots.delete(task.slot);
    const puller: Puller | null = pull && task.slot !== null && !task.session_id ? { slot: task.slot, next: null } : null;
    await run.settleReport(run.spec, task, outcome, puller);
    const next = puller?.next;
    if (!next || !pull) return null;
    return this.#withSetup(run, next, pull);
  }

  /** A pulled task, with its stage's setup unless the worker holds it already. */
  async #withSetup(run: JobRun, next: PulledTask, pull: PullRequest): Promise<PulledTask> {
    return pull.have.includes(setupKey(next.ref.round, next.ref.stage)) ? next : { ...next, setup: await run.setup(next.ref.stage) };
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
