/**
 * When a job's provider batches run out of time (contract v3, "Execution modes"; v4, the ladder):
 * - auto: when the deadline comes near — the time left is what the unfinished items need on the
 *   next rung at the job's concurrency, and a grace (a quarter of the deadline, at most a minute) —
 *   the open batches are read, then the batch stages move off batches and their open batches are
 *   cancelled; their lines wait out the grace for the cancelled batch's answer (its finished lines
 *   are the items' results, billed once), then run all the same. The next rung is OpenAI's flex
 *   tier where every model of the job has one and the deadline leaves the items time there (each
 *   call counted at FLEX_CALLS standard calls: its calls queue for spare capacity), else the
 *   standard tier (each call at min(timeout, AUTO_CALL_MS)). On flex, when the time left is what
 *   the unfinished items need on the standard tier, they move there: batch, then flex, then
 *   standard, each as the deadline needs;
 * - batch: past `deadline_secs` the open batches are cancelled and the items without a result
 *   fail `expired` where they wait, never submitted again.
 */
import { flexible } from "../../src/engine/execution";
import type { BatchHost } from "./batch-runner";

const AUTO_CALL_MS = 10_000; // auto: a standard-tier call's time when the move is planned (the call's timeout if shorter)
const FLEX_CALLS = 3; // auto: a flex call's time when the move to flex is planned, in standard calls (slower; busy answers wait)
const MAX_CANCEL_GRACE_MS = 60_000; // auto: how long a cancelled batch's lines wait for its answer before they run realtime
const EXPIRE_PER_ALARM = 200; // tasks the batch mode's deadline fails in one alarm: the rest in the next

/** What the deadlines need of the batch runner. */
export interface DeadlineRunner {
  stages(): string[];
  cancelOpen(): Promise<void>;
  /** A batch stage's call timeout (ms). */
  timeoutOf(stage: string): number;
}

/** A standard-tier call's planned time: AUTO_CALL_MS, or the stage's timeout if shorter. */
const standardCallMs = (runner: DeadlineRunner) => (stage: string) => Math.min(AUTO_CALL_MS, runner.timeoutOf(stage));

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
   * Execution mode auto: when the batch stages must move off batches to meet the deadline (null:
   * not auto, or moved already) — early enough for the unfinished items' calls on the next rung and,
   * before them, a grace for the cancelled batches to answer with the lines the provider finished.
   */
  fallbackAt(): number | null {
    const spec = this.#host.spec();
    if (spec.execution?.mode !== "auto") return null;
    const stages = this.#runner.stages();
    const grace = Math.min(MAX_CANCEL_GRACE_MS, (spec.execution.deadlineSecs * 1000) / 4);
    const standard = this.#needMs(stages, standardCallMs(this.#runner));
    if (standard === null) return null;
    const flex = this.#flexNeedMs(stages);
    // Flex where the deadline leaves its items time there from the job's start; else straight to standard.
    if (flex !== null && this.#deadline() - flex - grace > this.#host.startedAt()) return this.#deadline() - flex - grace;
    return this.#deadline() - standard - grace;
  }

  /** Execution mode auto, on the flex rung: when its stages must move to the standard tier to meet the deadline (null: none on flex). */
  standardAt(): number | null {
    const need = this.#needMs([...this.#host.ladder.flex], standardCallMs(this.#runner));
    return need === null ? null : this.#deadline() - need;
  }

  #deadline(): number {
    return this.#host.startedAt() + (this.#host.spec().execution?.deadlineSecs ?? 0) * 1000;
  }

  /** What the unfinished items of `stages` need on the flex tier (null: not every model of the job has one, or no stage). */
  #flexNeedMs(stages: string[]): number | null {
    const standard = standardCallMs(this.#runner);
    return flexible(this.#host.spec()) ? this.#needMs(stages, (stage) => FLEX_CALLS * standard(stage)) : null;
  }

  /** What the unfinished items of `stages` need at the job's concurrency, a call of each taking `callMs` (null: no stage). */
  #needMs(stages: string[], callMs: (stage: string) => number): number | null {
    if (stages.length === 0) return null;
    const { store } = this.#host;
    const unfinished = stages.reduce((n, name) => {
      const stage = store.stage(name);
      return n + (stage ? stage.total - stage.completed : 0);
    }, 0);
    return Math.ceil(unfinished / Math.max(1, this.#host.spec().concurrency)) * Math.max(...stages.map(callMs));
  }

  /**
   * The deadline is near: the batch stages run on the next rung (flex, or standard) from now on,
   * and their open batches (read just before, so one that ended has its lines kept) are cancelled.
   * Their lines wait for the cancelled batch's answer — the lines the provider finished come back,
   * billed once — for as long as the deadline leaves beyond the next rung's need (at most a
   * minute); after it they run all the same, and a line billed later counts as duplicated.
   */
  async fallBack(now: number): Promise<void> {
    const { store, ladder } = this.#host;
    const stages = this.#runner.stages();
    // The next rung: flex while the time left covers its need, else standard.
    const flexNeed = this.#flexNeedMs(stages);
    const flex = flexNeed !== null && this.#deadline() - now >= flexNeed;
    const need = (flex ? flexNeed : this.#needMs(stages, standardCallMs(this.#runner))) ?? 0;
    store.transaction(() => {
      for (const stage of stages) {
        ladder.realtime.add(stage);
        if (flex) ladder.flex.add(stage);
      }
      store.setMeta("realtime_stages", [...ladder.realtime]);
      store.setMeta("flex_stages", [...ladder.flex]);
      store.setMeta("cancel_grace_until_ms", now + Math.min(MAX_CANCEL_GRACE_MS, Math.max(0, this.#deadline() - now - need)));
    });
    await this.#runner.cancelOpen();
  }

  /** On flex, the deadline is nearer: the stages run on the standard tier from now on (calls under way on flex finish there). */
  toStandard(): void {
    this.#host.ladder.flex.clear();
    this.#host.store.setMeta("flex_stages", []);
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
