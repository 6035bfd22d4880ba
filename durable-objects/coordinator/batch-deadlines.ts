/**
 * When a job's provider batches run out of time (contract v3, "Execution modes"):
 * - auto: when the deadline comes near — the time left is what the unfinished items need realtime
 *   at the job's concurrency, each call counted at min(timeout, AUTO_CALL_MS), and a grace (a
 *   quarter of the deadline, at most a minute) — the open batches are read, then the batch stages
 *   move to realtime and their open batches are cancelled; their lines wait out the grace for the
 *   cancelled batch's answer (its finished lines are the items' results, billed once), then run
 *   realtime all the same;
 * - batch: past `deadline_secs` the open batches are cancelled and the items without a result
 *   fail `expired` where they wait, never submitted again.
 */
import type { BatchHost } from "./batch-runner";

const AUTO_CALL_MS = 10_000; // auto: a realtime call's time when the fallback is planned (the call's timeout if shorter)
const MAX_CANCEL_GRACE_MS = 60_000; // auto: how long a cancelled batch's lines wait for its answer before they run realtime
const EXPIRE_PER_ALARM = 200; // tasks the batch mode's deadline fails in one alarm: the rest in the next

/** What the deadlines need of the batch runner. */
export interface DeadlineRunner {
  stages(): string[];
  cancelOpen(): Promise<void>;
  /** A batch stage's call timeout (ms). */
  timeoutOf(stage: string): number;
}

export class BatchDeadlines {
  readonly #host: BatchHost;
  readonly #runner: DeadlineRunner;

  constructor(host: BatchHost, runner: DeadlineRunner) {
    this.#host = host;
    this.#runner = runner;
  }

  /** Execution mode batch: when its `deadline_secs` ends (null: another mode). */
  batchDeadline(): number | null {
    return this.#host.spec().execution?.mode === "batch" ? this.#deadline() : null;
  }

  /**
   * Execution mode batch, past its deadline: the open batches are cancelled (once), and the items
   * without a result fail `expired` where they wait — those still in a cancelled batch once it has
   * ended (its finished lines are results) — never submitted again.
   */
  async expire(): Promise<void> {
    const { store } = this.#host;
    if (!store.getMeta("deadline_passed")) {
      store.setMeta("deadline_passed", true);
      await this.#runner.cancelOpen();
    }
    const secs = this.#host.spec().execution?.deadlineSecs ?? 0;
    const error = `The job's execution.deadline_secs (${secs}) passed before this item's batch line ran.`;
    for (const stage of this.#runner.stages()) {
      for (const row of store.batches.pendingOf(stage, EXPIRE_PER_ALARM)) {
        if (this.#host.status() !== "running" && this.#host.status() !== "paused") return;
        await this.#host.giveUp(row, error, "expired");
      }
    }
  }

  /**
   * Execution mode auto: when the batch stages must move to realtime to meet the deadline (null: not
   * auto, or moved already) — early enough for the unfinished items' realtime calls and, before
   * them, a grace for the cancelled batches to answer with the lines the provider finished.
   */
  fallbackAt(): number | null {
    const spec = this.#host.spec();
    if (spec.execution?.mode !== "auto") return null;
    const need = this.#realtimeNeedMs();
    if (need === null) return null;
    return this.#deadline() - need - Math.min(MAX_CANCEL_GRACE_MS, (spec.execution.deadlineSecs * 1000) / 4);
  }

  #deadline(): number {
    return this.#host.startedAt() + (this.#host.spec().execution?.deadlineSecs ?? 0) * 1000;
  }

  /** What the unfinished items of the batch stages need realtime at the job's concurrency (null: no batch stage). */
  #realtimeNeedMs(): number | null {
    const stages = this.#runner.stages();
    if (stages.length === 0) return null;
    const { store } = this.#host;
    const unfinished = stages.reduce((n, name) => {
      const stage = store.stage(name);
      return n + (stage ? stage.total - stage.completed : 0);
    }, 0);
    const callMs = Math.min(AUTO_CALL_MS, ...stages.map((s) => this.#runner.timeoutOf(s)));
    return Math.ceil(unfinished / Math.max(1, this.#host.spec().concurrency)) * callMs;
  }

  /**
   * The deadline is near: the batch stages run realtime from now on, and their open batches (read
   * just before, so one that ended has its lines kept) are cancelled. Their lines wait for the
   * cancelled batch's answer — the lines the provider finished come back, billed once — for as long
   * as the deadline leaves beyond the realtime calls' need (at most a minute); after it they run
   * realtime all the same, and a line billed later counts as duplicated.
   */
  async fallBack(now: number): Promise<void> {
    const { store, realtime } = this.#host;
    const need = this.#realtimeNeedMs() ?? 0;
    store.transaction(() => {
      for (const stage of this.#runner.stages()) realtime.add(stage);
      store.setMeta("realtime_stages", [...realtime]);
      store.setMeta("cancel_grace_until_ms", now + Math.min(MAX_CANCEL_GRACE_MS, Math.max(0, this.#deadline() - now - need)));
    });
    await this.#runner.cancelOpen();
  }

  /** The grace is over: the lines of cancelled batches not answered yet run realtime (a line billed later counts as duplicated). */
  leaveCancelled(): void {
    const { store, log } = this.#host;
    store.transaction(() => {
      for (const batch of store.batches.open()) {
        if (!batch.cancel_requested) continue;
        const tasks = store.batches.inBatch(batch.id);
        for (const task of tasks) this.#host.tasks.apply(task, { type: "withdraw" }); // pending for a realtime call, still known as the batch's
        log.bump({ total_attempts: -tasks.length });
      }
      store.setMeta("cancel_grace_until_ms", null);
    });
  }
}
