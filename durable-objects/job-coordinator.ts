/**
 * JobCoordinator: one per job. Owns dispatch (at most `concurrency` attempts in flight), the item
 * state machine, the event log and live SSE streams, and completion.
 *
 * Item states (see ./coordinator/store.ts):
 *   pending ──dispatch──▶ running ──report──▶ done
 *      ▲                    │  └─(lost: no report within timeout + grace, or dispatch failed)─▶ pending
 *      └──── waiting ◀──────┘ retry with backoff (a Queue message and the alarm sweep both wake it)
 * A lost dispatch counts as an attempt: after 1 + max_retries of them the item is done, failed
 * with `internal`, so a poison item that kills its worker is never dispatched forever.
 * Job status: queued → running → completed | cancelled. A retry that waits holds no slot.
 *
 * The coordinator's storage is the truth; the Queue is only a timer. The alarm sweeps while the
 * job runs, so a lost Queue message or a restarted server loses nothing, and each index ends
 * with exactly one result (D1's primary key on (job_id, idx) enforces it too).
 */
import { DurableObject } from "cloudflare:workers";
import { sseKeepaliveMs } from "../src/config";
import { randomBase32 } from "../src/lib/ids";
import { nextStep, type AttemptOutcome, type NextStep } from "../src/jobs/retry-policy";
import { isTerminal, type AttemptTask, type JobSpec, type JobStatus } from "../src/jobs/spec";
import { newId } from "../src/lib/ids";
import { writeJobProgress, type JobProgress } from "../src/db/jobs";
import { EventHub } from "./coordinator/event-hub";
import { CoordinatorStore, type ItemResult, type ItemRow } from "./coordinator/store";
import { sweepWebhook, type CompletedEvent } from "./coordinator/webhook-sweep";
import { lostSessionResult } from "../src/agent/result";

const SWEEP_INTERVAL_MS = 10_000; // how often a running job checks for lost work
const LOST_GRACE_MS = 15_000; // a dispatch with no report after timeout + this is presumed lost
const AGENT_TURN_OVERHEAD_MS = 30_000; // per turn of a sub-session: tool calls and storage on top of the model call
const QUEUE_GRACE_MS = 2_000; // the sweep picks up a backoff retry this long after its Queue message is due
const QUEUE_MIN_DELAY_MS = 1_000; // shorter backoffs use the alarm: Queue delays are whole seconds
const FLUSH_DELAY_MS = 100; // results are copied to D1 in batches at most this stale
const FLUSH_BATCH = 50; // rows per D1 batch

interface Counters {
  completed: number;
  succeeded: number;
  failed: number;
  total_attempts: number;
  input_tokens: number;
  output_tokens: number;
}

const ZERO: Counters = { completed: 0, succeeded: 0, failed: 0, total_attempts: 0, input_tokens: 0, output_tokens: 0 };

export class JobCoordinator extends DurableObject<Env> {
  #store!: CoordinatorStore;
  #spec: JobSpec | null = null;
  #total = 0;
  #status: JobStatus = "queued";
  #finalized = false;
  #counters: Counters = { ...ZERO };
  #busySlots = new Set<number>();
  #alarmAt: number | null = null;
  #hub: EventHub;
  #waiters: (() => void)[] = [];
  #flushTimer: ReturnType<typeof setTimeout> | null = null;
  #flushing: Promise<void> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#hub = new EventHub(sseKeepaliveMs(env));
    void ctx.blockConcurrencyWhile(async () => {
      this.#store = new CoordinatorStore(ctx.storage);
      this.#spec = this.#store.getMeta<JobSpec>("spec") ?? null;
      this.#total = this.#store.getMeta<number>("total") ?? 0;
      this.#status = this.#store.getMeta<JobStatus>("status") ?? "queued";
      this.#finalized = this.#store.getMeta<boolean>("finalized") ?? false;
      this.#counters = this.#store.getMeta<Counters>("counters") ?? { ...ZERO };
      for (const row of this.#store.running()) if (row.slot !== null) this.#busySlots.add(row.slot);
      this.#alarmAt = await ctx.storage.getAlarm();
    });
  }

  // ── RPC ────────────────────────────────────────────────────────────────────────────────────

  /** Stores the job and schedules its start; a second call for the same job does nothing. */
  async start(spec: JobSpec, inputs: unknown[]): Promise<void> {
    if (this.#spec) return;
    this.#store.transaction(() => {
      this.#store.setMeta("spec", spec);
      this.#store.setMeta("total", inputs.length);
      this.#store.setMeta("status", "queued");
      this.#store.setMeta("counters", ZERO);
      this.#store.insertItems(inputs, () => (spec.type === "agentic_map" ? newId("ses") : null));
    });
    this.#spec = spec;
    this.#total = inputs.length;
    await this.#wakeAt(Date.now());
  }

  /** A worker's report of one attempt. Reports for a dispatch that is no longer current are ignored. */
  async report(index: number, token: string, outcome: AttemptOutcome): Promise<void> {
    const spec = this.#spec;
    const item = this.#store.item(index);
    if (!spec || this.#status !== "running" || !item || item.state !== "running" || item.token !== token) return;
    if (item.slot !== null) this.#busySlots.delete(item.slot);
    const step = nextStep(outcome, item.attempts, spec.maxRetries);
    if (step.step === "retry") {
      const readyAt = Date.now() + step.delayMs;
      this.#store.markRetry(index, readyAt, step.guidance, outcome.usage);
      if (step.delayMs >= QUEUE_MIN_DELAY_MS) {
        await this.env.TASKS.send(
          { type: "wake_job", job_id: spec.jobId },
          { delaySeconds: Math.ceil(step.delayMs / 1000) },
        ).catch((err: unknown) => console.error("queue send failed; the sweep will retry", err));
        await this.#wakeAt(readyAt + QUEUE_GRACE_MS);
      } else if (step.delayMs > 0) await this.#wakeAt(readyAt);
    } else {
      this.#complete(item, outcome, step);
    }
    this.#dispatch();
    if (this.#counters.completed === this.#total) await this.#finish("completed");
  }

  /** Called by the Queue consumer when a backoff is over. */
  async wake(): Promise<void> {
    if (!this.#spec || this.#status !== "running") return;
    this.#store.releaseDue(Date.now());
    this.#dispatch();
  }

  async cancel(): Promise<boolean> {
    if (!this.#spec || isTerminal(this.#status)) return false;
    // Sub-sessions under way stop after their current turn, so a cancelled job spends no more tokens.
    for (const row of this.#store.running()) {
      if (row.session_id) this.#stopSession(row.session_id);
    }
    await this.#finish("cancelled");
    return true;
  }

  /** Resolves true once the job has ended, or false after `timeoutMs`. */
  async waitForEnd(timeoutMs: number): Promise<boolean> {
    if (this.#finalized) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** GET /events (SSE), with `Last-Event-ID` for resumption. */
  override async fetch(request: Request): Promise<Response> {
    const lastId = Number(request.headers.get("last-event-id") ?? "0");
    const after = Number.isInteger(lastId) && lastId > 0 ? lastId : 0;
    return this.#hub.open(this.#store.eventsAfter(after), this.#finalized);
  }

  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    if (!this.#spec) return;
    if (this.#status === "queued") this.#begin();
    if (isTerminal(this.#status)) {
      if (!this.#finalized) await this.#finish(this.#status);
      else await this.#watchWebhook();
      return;
    }
    const now = Date.now();
    for (const row of this.#store.running()) {
      if ((row.dispatched_at ?? 0) + this.#lostAfterMs(this.#spec) < now) this.#lost(row, "no report from its worker in time");
    }
    if (this.#counters.completed === this.#total) return this.#finish("completed");
    this.#store.releaseDue(now);
    this.#dispatch();
    await this.#flush();
    const waiting = this.#store.nextWaitingAt();
    await this.#wakeAt(Math.min(now + SWEEP_INTERVAL_MS, waiting === null ? Infinity : waiting + QUEUE_GRACE_MS));
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  #begin(): void {
    const spec = this.#spec;
    if (!spec) return;
    this.#status = "running";
    this.#store.setMeta("status", "running");
    const kind = spec.type === "agentic_map" ? { type: "agentic" } : {};
    this.#emit("MAP_STARTED", { job_id: spec.jobId, total: this.#total, model: spec.model, ...kind });
    this.#scheduleFlush();
  }

  /** Fills free slots with pending items. Never awaits a worker: `begin` only stores the task. */
  #dispatch(): void {
    const spec = this.#spec;
    if (!spec || this.#status !== "running") return;
    const free: number[] = [];
    for (let slot = 0; slot < spec.concurrency && free.length < spec.concurrency; slot++) {
      if (!this.#busySlots.has(slot)) free.push(slot);
    }
    if (free.length === 0) return;
    const now = Date.now();
    for (const [i, row] of this.#store.nextPending(free.length).entries()) {
      const slot = free[i] as number;
      const token = randomBase32(10);
      this.#store.markRunning(row.idx, slot, token, now);
      this.#busySlots.add(slot);
      this.#bump({ total_attempts: 1 });
      const task: AttemptTask = {
        spec,
        index: row.idx,
        input: JSON.parse(row.input) as unknown,
        attempt: row.attempts + 1,
        token,
        slot,
        problems: row.problems ? (JSON.parse(row.problems) as string[]) : null,
        sessionId: row.session_id,
      };
      const worker = row.session_id
        ? this.env.AGENT_SESSION.get(this.env.AGENT_SESSION.idFromName(row.session_id))
        : this.env.MAP_WORKER.get(this.env.MAP_WORKER.idFromName(`${spec.jobId}:${slot}`));
      worker.begin(task).catch((err: unknown) => {
        console.error("dispatch failed; will retry", err);
        const current = this.#store.item(row.idx);
        if (current?.token !== token || current.state !== "running") return;
        this.#lost(current, "its worker could not be reached");
        void this.#wakeAt(Date.now() + 1_000);
        if (this.#counters.completed === this.#total) void this.#finish("completed");
      });
    }
  }

  /** A dispatch that will never report: it counts as an attempt; the last allowed one fails the item (`internal`). */
  #lost(row: ItemRow, why: string): void {
    const spec = this.#spec as JobSpec;
    if (row.slot !== null) this.#busySlots.delete(row.slot);
    if (row.attempts < 1 + spec.maxRetries) {
      this.#store.markLost(row.idx);
      return;
    }
    const error = `The attempt was lost ${row.attempts} times (${why}); the item is not retried again.`;
    if (row.session_id) this.#stopSession(row.session_id);
    const usage = { input_tokens: 0, output_tokens: 0 };
    const outcome: AttemptOutcome = row.session_id ? { kind: "agent", result: lostSessionResult(row.session_id, error), usage } : { kind: "crash", error, usage };
    this.#complete(row, outcome, { step: "fail", error, errorKind: "internal" });
  }

  /** Its current turn is its last; not waited for. */
  #stopSession(sessionId: string): void {
    this.env.AGENT_SESSION.get(this.env.AGENT_SESSION.idFromName(sessionId)).stop()
      .catch((err: unknown) => console.error("could not stop a session", err));
  }

  /** How long a dispatch may go without a report before it is presumed lost. */
  #lostAfterMs(spec: JobSpec): number {
    const perCall = spec.timeoutMs * (1 + spec.maxRetries);
    return spec.type === "map" ? spec.timeoutMs + LOST_GRACE_MS : spec.maxTurns * (perCall + AGENT_TURN_OVERHEAD_MS) + LOST_GRACE_MS;
  }

  #complete(item: ItemRow, outcome: AttemptOutcome, step: Exclude<NextStep, { step: "retry" }>): void {
    const spec = this.#spec as JobSpec;
    const success = step.step === "succeed";
    this.#store.transaction(() => {
      const row = this.#store.markDone(item.idx, outcome.usage);
      const input = JSON.parse(item.input) as unknown;
      const result: ItemResult =
        outcome.kind === "agent"
          ? { index: item.idx, input, ...outcome.result }
          : {
              index: item.idx,
              input,
              output: success ? step.output : null,
              success,
              error: success ? null : step.error,
              error_kind: success ? null : step.errorKind,
              attempts: item.attempts,
              usage: { input_tokens: row.input_tokens, output_tokens: row.output_tokens },
            };
      this.#bump({
        completed: 1,
        succeeded: success ? 1 : 0,
        failed: success ? 0 : 1,
        input_tokens: row.input_tokens,
        output_tokens: row.output_tokens,
      });
      this.#store.addToOutbox(result, this.#counters.completed);
      this.#emit("MAP_ITEM_COMPLETED", {
        job_id: spec.jobId,
        completed: this.#counters.completed,
        total: this.#total,
        success,
        result,
      });
    });
    this.#scheduleFlush();
  }

  async #finish(status: JobStatus): Promise<void> {
    const spec = this.#spec as JobSpec;
    if (!isTerminal(this.#status)) {
      this.#status = status;
      this.#store.transaction(() => {
        // Attempts still under way produce no result: the job's count is that of its results.
        if (status === "cancelled") this.#bump({ total_attempts: this.#store.doneAttempts() - this.#counters.total_attempts });
        this.#store.setMeta("status", status);
        this.#store.setMeta("completed_at", new Date().toISOString());
      });
    }
    try {
      await this.#flush();
    } catch (err) {
      console.error("final flush failed; the alarm retries", err);
      await this.#wakeAt(Date.now() + 1_000);
      return;
    }
    if (this.#finalized) return;
    this.#finalized = true;
    this.#store.transaction(() => {
      const data = { job_id: spec.jobId, status: this.#status, total: this.#total, ...this.#summary() };
      this.#store.setMeta("finalized", true);
      this.#store.setMeta("completed_event", { completedAt: this.#store.getMeta<string>("completed_at"), data });
      this.#emit("MAP_COMPLETED", data);
    });
    this.#hub.closeAll();
    for (const resolve of this.#waiters.splice(0)) resolve();
    await this.ctx.storage.deleteAlarm();
    this.#alarmAt = null;
    await this.#watchWebhook();
  }

  /** After the end: deliver MAP_COMPLETED to the job's webhook, and watch it until it settles. */
  async #watchWebhook(): Promise<void> {
    const spec = this.#spec;
    const completed = this.#store.getMeta<CompletedEvent>("completed_event");
    if (!spec?.webhook || !completed || this.#store.getMeta<boolean>("webhook_settled")) return;
    try {
      const next = await sweepWebhook(this.env, this.#store, { jobId: spec.jobId, tenantId: spec.tenantId, url: spec.webhook.url }, completed);
      if (next === null) this.#store.setMeta("webhook_settled", true);
      else await this.#wakeAt(next);
    } catch (err) {
      console.error("webhook sweep failed; retrying", err);
      await this.#wakeAt(Date.now() + 5_000);
    }
  }

  #summary() {
    const c = this.#counters;
    return {
      completed: c.completed,
      succeeded: c.succeeded,
      failed: c.failed,
      total_attempts: c.total_attempts,
      usage: { input_tokens: c.input_tokens, output_tokens: c.output_tokens },
    };
  }

  #emit(name: string, data: unknown): void {
    this.#hub.publish(this.#store.appendEvent(name, data));
  }

  #bump(delta: Partial<Counters>): void {
    for (const [key, value] of Object.entries(delta) as [keyof Counters, number][]) this.#counters[key] += value;
    this.#store.setMeta("counters", this.#counters);
  }

  async #wakeAt(time: number): Promise<void> {
    if (this.#alarmAt !== null && this.#alarmAt <= time) return;
    this.#alarmAt = time;
    await this.ctx.storage.setAlarm(time);
  }

  #scheduleFlush(): void {
    if (this.#flushTimer !== null) return;
    this.#flushTimer = setTimeout(() => {
      this.#flushTimer = null;
      this.#flush().catch((err: unknown) => console.error("flush failed; the alarm retries", err));
    }, FLUSH_DELAY_MS);
  }

  /** Copies finished results and the job's counters to D1. Flushes never overlap. */
  #flush(): Promise<void> {
    const run = this.#flushing.catch(() => undefined).then(() => this.#flushOnce());
    this.#flushing = run;
    return run;
  }

  async #flushOnce(): Promise<void> {
    const spec = this.#spec as JobSpec;
    do {
      const rows = this.#store.outbox(FLUSH_BATCH);
      const progress: JobProgress = {
        status: this.#status,
        ...this.#counters,
        completed_at: this.#store.getMeta<string>("completed_at") ?? null,
      };
      await writeJobProgress(this.env.DB, spec.jobId, progress, rows);
      this.#store.removeFromOutbox(rows.map((r) => r.idx));
    } while (this.#store.outboxSize() > 0);
  }
}
