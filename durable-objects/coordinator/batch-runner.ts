/**
 * The batch executor's runner (contract v3, "Execution modes"): the ready tasks of a job's batch
 * stages go out as lines of provider batches, polled from the coordinator's alarm, their results
 * settled like realtime reports. No request waits on a batch.
 *
 * - Submit: a stage's pending tasks, up to the provider's caps (and MAX_BATCH_BYTES, which bounds
 *   the memory a batch's JSONL takes), each reserving its budget like a dispatch. Their prompts are
 *   rendered within one alarm's work budget (src/engine/work-budget.ts): past it, the batch goes
 *   with the lines it has and the rest are submitted from the next alarm, at once. The batch row and
 *   its tasks (`running`, `batch_id`, no slot) are stored before the provider is asked, so a
 *   restart knows of every batch it may have created: one still `submitting` after a restart is
 *   found by its id in the provider's metadata (OpenAI) and adopted, or its lines go back to
 *   pending uncounted (Anthropic keeps no metadata: a restart in the moment between its answer and
 *   our write submits those lines again).
 * - Owned: polled, read and cancelled only with the credential that submitted it (its fingerprint
 *   is kept, src/llm/batch/owner.ts; another credential now: its lines fail for good). A
 *   submission's answer is taken only if the provider's view of that id is the submitted batch.
 * - Poll: each running batch when due, with backoff (POLL_MIN_MS × 1.5ⁿ up to POLL_MAX_MS);
 *   BATCH_PROGRESS when its counts change. Once it has ended its results are read as they stream
 *   in (bounded: src/llm/batch/types.ts), matched to their tasks by `custom_id`
 *   (`s<stage ord>-<index>`; a repeated one keeps its first valid answer, ./batch-results.ts),
 *   validated like a realtime answer and settled by the retry policy: an invalid output goes into
 *   a later batch with guidance, an expired or missing line counts as an attempt (`expired`, or
 *   `llm_error`, once max_retries is spent); a line of a batch we cancelled goes back to pending
 *   without counting. BATCH_ENDED comes before its lines' TASK_COMPLETED events (the last of them
 *   may end the job, and MAP_COMPLETED stays the last event).
 * - Cancel: a cancelled or failed job cancels its open batches at the provider; one whose creation
 *   is under way is marked, and cancelled as soon as the provider's answer gives its id. A
 *   cancelled batch that has not ended after MAX_CANCEL_WAIT_MS is polled no more.
 * - Deadlines (./batch-deadlines.ts): `auto` moves to realtime when its deadline comes near (a
 *   line answered after its task left is its result if it has none, else `usage.duplicated`);
 *   `batch` fails what is left `expired` past its deadline. Never counted twice.
 */
import { renderLimits, readVar } from "../../src/config";
import { randomBase32 } from "../../src/lib/ids";
import { compileCall, failureOutcome, type CompiledCall } from "../../src/engine/attempt";
import type { AttemptOutcome } from "../../src/engine/retry-policy";
import type { ErrorKind, Operator, StageWork } from "../../src/engine/types";
import type { JobSpec } from "../../src/operators/registry";
import { parseModel } from "../../src/llm/models";
import { endpointFrom, endpointData } from "../../src/llm/call-model";
import { batchApiOf } from "../../src/llm/batch/registry";
import type { BatchApi, LineResult } from "../../src/llm/batch/types";
import type { ProviderEndpoint } from "../../src/llm/types";
import { providerBatchView, type BatchRow } from "./batch-table";
import type { BudgetKeeper } from "./budget";
import type { JobLog } from "./job-log";
import type { CoordinatorStore, TaskRow } from "./store";
import type { TaskRunner } from "./task-runner";
import { WorkBudget } from "../../src/engine/work-budget";
import { workOf } from "../../src/engine/executors";
import { credentialFingerprint, DISOWNED_MESSAGE } from "../../src/llm/batch/owner";
import { matchResults } from "./batch-results";
import { gatherLines, lineOutcome, missingLine } from "./batch-lines";
import { BatchDeadlines } from "./batch-deadlines";

const POLL_MIN_MS = 5_000; // the first poll after a submission; BATCH_POLL_MS overrides it (tests)
const POLL_MAX_MS = 60_000; // a long batch is polled once a minute
const MAX_CANCEL_WAIT_MS = 60 * 60_000; // a cancelled batch still not ended after this is polled no more (its lines never ran, as far as we know); BATCH_CANCEL_WAIT_MS overrides it (tests)

type BatchWork = Extract<StageWork, { kind: "batch" }>;
type StageProvider = { api: BatchApi; endpoint: ProviderEndpoint; work: BatchWork; fingerprint: string };

/** What the runner needs of its job. */
export interface BatchHost {
  readonly env: Env;
  readonly store: CoordinatorStore;
  readonly log: JobLog;
  readonly budget: BudgetKeeper;
  spec(): JobSpec;
  readonly op: Operator;
  /** The job's task runner: a line's task moves through it (./task-runner.ts). */
  readonly tasks: TaskRunner;
  /** Settles one line's outcome like a report (priced at the batch discount). */
  settleLine(task: TaskRow, outcome: AttemptOutcome): Promise<void>;
  /** A line billed for an item that had (or was getting) its result realtime (execution mode auto). */
  duplicated(task: TaskRow, outcome: AttemptOutcome): void;
  /** Execution mode auto's ladder: the stages moved off batches and those of them on flex (shared with the job's operator view); when the job began. */
  readonly ladder: { realtime: Set<string>; flex: Set<string> };
  startedAt(): number;
  /** Nothing fits the budget and nothing is under way: the job pauses or fails. */
  budgetExhausted(): void;
  /** A pending task fails where it waits, without a call (the batch mode's deadline passed). */
  giveUp(task: TaskRow, error: string, errorKind: ErrorKind): Promise<void>;
  /** The job's status: new batches start only while it runs. */
  status(): string;
}

export class BatchRunner {
  readonly #host: BatchHost;
  readonly #submitting = new Set<string>(); // batches this instance is submitting now (a `submitting` row outside it was lost to a restart)
  readonly #compiled = new Map<string, CompiledCall>();

  readonly #deadlines: BatchDeadlines;

  constructor(host: BatchHost) {
    this.#host = host;
    this.#deadlines = new BatchDeadlines(host, {
      stages: () => this.stages(),
      cancelOpen: () => this.cancelOpen(),
      timeoutOf: (stage) => this.#work(stage).call.timeoutMs,
    });
  }

  /** The stages whose ready tasks go out in provider batches. */
  stages(): string[] {
    const { op, store } = this.#host;
    const spec = this.#host.spec();
    return store.stages().flatMap((s) => (s.kind !== "children" && isBatch(op, spec, s.name) ? [s.name] : []));
  }

  /**
   * After the job's end: its cancelled batches are read as they end, so what the provider billed
   * for nothing shows in `usage.duplicated` (and the job's cost). Answers when to poll next.
   */
  async afterEnd(now: number): Promise<number | null> {
    const { store } = this.#host;
    for (const batch of store.batches.open()) if (batch.status === "running" && batch.cancel_requested && batch.next_poll_at <= now) await this.#poll(batch);
    return store.batches.open().some((b) => b.status === "running" && b.cancel_requested) ? store.batches.nextPollAt() : null;
  }

  /** Polls the batches that are due, then submits what is ready; answers when it needs the alarm next (null: not for batches). */
  async tick(now: number): Promise<number | null> {
    const { store } = this.#host;
    const fallback = this.#deadlines.fallbackAt();
    const falling = fallback !== null && now >= fallback; // auto moves to realtime: every open batch is read first (one that ended keeps its lines)
    for (const batch of store.batches.open()) {
      if (batch.status === "submitting" && !this.#submitting.has(batch.id)) await this.#guarded(() => this.#recoverLost(batch));
      else if (batch.status === "running" && (falling || batch.next_poll_at <= now)) await this.#guarded(() => this.#poll(batch));
    }
    if (falling) await this.#deadlines.fallBack(now);
    const standard = this.#deadlines.standardAt();
    if (standard !== null && now >= standard) this.#deadlines.toStandard();
    const grace = store.getMeta("cancel_grace_until_ms") ?? null;
    if (grace !== null && now >= grace) this.#deadlines.leaveCancelled();
    const work = new WorkBudget(); // the renders of this alarm's submissions
    const deadline = this.#deadlines.batchDeadline();
    if (deadline !== null && now >= deadline) await this.#guarded(() => this.#deadlines.expire());
    else if (this.#host.status() === "running") for (const stage of this.stages()) await this.#guarded(() => this.#submitStage(stage, work));
    const times = [
      store.batches.nextPollAt(),
      this.#deadlines.fallbackAt(),
      this.#deadlines.standardAt(),
      store.getMeta("cancel_grace_until_ms") ?? null,
    ].filter((t): t is number => t !== null);
    if (work.spent && this.hasReady()) times.push(Date.now()); // the rest of the lines go out from the next alarm
    return times.length === 0 ? null : Math.min(...times);
  }

  /** One batch's or stage's turn: a failure (its endpoint unreadable, storage) is logged and tried again at the next alarm, not the job's end. */
  async #guarded(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      console.error("a provider batch's turn failed; the next alarm tries again", err);
    }
  }

  /** Whether a batch stage has tasks waiting for the next submission. */
  hasReady(): boolean {
    return this.stages().some((stage) => this.#host.store.batches.pendingOf(stage, 1).length > 0);
  }

  /** The job ends cancelled or failed: its open batches are cancelled at the provider (best effort; their results are not read). */
  async cancelOpen(): Promise<void> {
    const { store } = this.#host;
    for (const batch of store.batches.open()) {
      if (batch.cancel_requested) continue;
      // Its end is read soon: the lines it finished are results. One whose creation is under way is cancelled once its id is known.
      store.batches.cancelRequested(batch.id, Date.now() + this.#pollDelay(0));
      if (batch.provider_batch_id === null) continue;
      try {
        const owner = await this.#owner(batch);
        if (!owner) continue; // only its own credential may cancel it; its lines fail at the next poll
        await owner.api.cancel(owner.endpoint, batch.provider_batch_id);
      } catch (err) {
        console.error("could not cancel a provider batch", batch.provider_batch_id, err);
      }
    }
  }

  views() {
    return this.#host.store.batches.all().map(providerBatchView);
  }

  #cancelWaitMs(): number {
    return Number(readVar(this.#host.env, "BATCH_CANCEL_WAIT_MS") ?? MAX_CANCEL_WAIT_MS) || MAX_CANCEL_WAIT_MS;
  }

  #pollDelay(polls: number): number {
    const min = Number(readVar(this.#host.env, "BATCH_POLL_MS") ?? POLL_MIN_MS) || POLL_MIN_MS;
    return Math.min(min * 1.5 ** polls, Math.max(min, POLL_MAX_MS));
  }

  /** A batch stage's work (its calls; one auto moved to realtime has call work now, the same calls). */
  #work(stage: string): BatchWork {
    const work = this.#host.op.work(this.#host.spec(), stage);
    if (work.kind === "agent") throw new Error(`stage ${stage} is not a batch stage`);
    return { kind: "batch", tenantId: work.tenantId, call: work.call };
  }

  #compile(stage: string, work: BatchWork): CompiledCall {
    let compiled = this.#compiled.get(stage);
    if (!compiled) this.#compiled.set(stage, (compiled = compileCall(work.call, renderLimits(this.#host.env))));
    return compiled;
  }

  /** The stage's batch API with the tenant's credential now, and that credential's fingerprint (src/llm/batch/owner.ts). */
  async #provider(stage: string): Promise<StageProvider> {
    const work = this.#work(stage);
    const provider = parseModel(work.call.model).provider;
    const api = batchApiOf(provider);
    const endpoint = endpointFrom(this.#host.env, await endpointData(this.#host.env, work.tenantId, provider));
    if (!api || !endpoint) throw new Error(`${provider} has no batch API`);
    return { api, endpoint, work, fingerprint: await credentialFingerprint(provider, endpoint) };
  }

  /** The batch's API with the credential that submitted it; null when the tenant's credential is now another (changed, or deleted: the deployment's). */
  async #owner(batch: BatchRow): Promise<StageProvider | null> {
    const provider = await this.#provider(batch.stage);
    return batch.credential === null || batch.credential === provider.fingerprint ? provider : null;
  }

  /** Its credential is gone: the batch ends `failed` and each line fails for good, never read with another credential. */
  async #disowned(batch: BatchRow): Promise<void> {
    const { store, log } = this.#host;
    const tasks = store.batches.inBatch(batch.id);
    store.batches.end(batch.id, "failed", Date.now());
    log.emit("BATCH_ENDED", { job_id: this.#host.spec().jobId, batch: providerBatchView(store.batches.get(batch.id) as BatchRow) });
    for (const task of tasks)
      await this.#host.settleLine(task, { kind: "permanent", error: DISOWNED_MESSAGE, errorKind: "llm_error", usage: { input_tokens: 0, output_tokens: 0 } });
  }

  #customId(task: TaskRow): string {
    return `s${this.#host.store.stage(task.stage)?.ord ?? 0}-${task.idx}`;
  }

  async #submitStage(stage: string, work: WorkBudget): Promise<void> {
    const { store, log, budget, op } = this.#host;
    const spec = this.#host.spec();
    const pending = store.batches.pendingOf(stage, 1);
    if (pending.length === 0) return;
    if (work.spent) return;
    const { api, endpoint, work: calls, fingerprint } = await this.#provider(stage);
    const compiled = this.#compile(stage, calls);
    const rows = store.batches.pendingOf(stage, api.maxRequests);
    const gathered = gatherLines(rows, { spec, op, store, budget, stage, calls, compiled, api, work, customId: (row) => this.#customId(row) });
    const { lines, taken, overBudget } = gathered;
    let unrenderable = gathered.unrenderable;
    const now = Date.now();
    const id = `b${randomBase32(12)}`;
    if (taken.length === 0 && unrenderable.length === 0) {
      if (overBudget && store.running().length === 0) this.#host.budgetExhausted();
      return;
    }
    store.transaction(() => {
      if (taken.length > 0)
        store.batches.add({ id, stage, provider: parseModel(calls.call.model).provider, requests: taken.length, created_at: now, credential: fingerprint });
      for (const { row, reserved } of taken) this.#inBatch(row, id, now, reserved);
      for (const { row } of unrenderable) this.#inBatch(row, id, now, { tokens: 0, usd: 0 });
      log.bump({ total_attempts: taken.length + unrenderable.length });
    });
    for (const { row, outcome } of unrenderable) await this.#host.settleLine(this.#current(row), outcome);
    unrenderable = [];
    if (taken.length === 0) return;
    this.#submitting.add(id);
    let providerId: string;
    try {
      providerId = await api.submit(endpoint, lines, id);
    } catch (err) {
      this.#submitting.delete(id);
      return this.#refused(id, failureOutcome(err, calls.call.timeoutMs, "the batch could not be submitted"));
    }
    // The id is accepted only if the provider's view of that batch is the one submitted (its metadata, its count of lines).
    const verified = await api.verify(endpoint, providerId, id, taken.length).catch((err: unknown) => {
      console.error("could not verify a submitted batch; taking the provider's answer", providerId, err);
      return true;
    });
    this.#submitting.delete(id);
    if (!verified)
      return this.#refused(id, {
        kind: "transient",
        error: `The provider answered the batch's submission with ${providerId}, whose metadata or count of lines is not the submitted batch's.`,
        retryAfterMs: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      });
    store.batches.submitted(id, providerId, Date.now(), Date.now() + this.#pollDelay(0));
    log.emit("BATCH_SUBMITTED", { job_id: spec.jobId, batch: providerBatchView(store.batches.get(id) as BatchRow) });
    const ended = this.#host.status() !== "running" && this.#host.status() !== "paused";
    if (ended || store.batches.get(id)?.cancel_requested) await this.#cancelCreated(id, providerId, api, endpoint);
  }

  /** A batch the provider created after the job was cancelled (its answer came late): cancelled now; its end is read, what it billed counted. */
  async #cancelCreated(id: string, providerId: string, api: BatchApi, endpoint: ProviderEndpoint): Promise<void> {
    this.#host.store.batches.cancelRequested(id, Date.now() + this.#pollDelay(0));
    try {
      await api.cancel(endpoint, providerId);
    } catch (err) {
      console.error("could not cancel a provider batch created after its job's end", providerId, err);
    }
  }

  /** The row as stored now (a line's task was marked running in this turn). */
  #current(row: TaskRow): TaskRow {
    return this.#host.store.task(row.stage, row.idx) ?? row;
  }

  /** A cancelled batch the provider never ends: polled no more; its lines are pending again, uncounted (as far as we know they never ran). */
  #abandon(batch: BatchRow): void {
    console.error(`a cancelled provider batch did not end within ${this.#cancelWaitMs() / 1000} s; it is polled no more`, batch.provider_batch_id);
    this.#linesBack(batch, Date.now());
  }

  /** The batch ends `failed` and its lines go back to pending, their attempts not counted (they never ran, as far as we know). */
  #linesBack(batch: BatchRow, now: number): void {
    const { store, log } = this.#host;
    store.transaction(() => {
      const tasks = store.batches.inBatch(batch.id);
      for (const task of tasks) this.#unattempted(task);
      log.bump({ total_attempts: -tasks.length });
      store.batches.end(batch.id, "failed", now);
    });
  }

  /** The provider refused the batch as a whole: each line's task takes the refusal as its attempt's outcome. */
  async #refused(id: string, outcome: AttemptOutcome): Promise<void> {
    const { store, log } = this.#host;
    const spec = this.#host.spec();
    const tasks = store.batches.inBatch(id);
    store.batches.end(id, "failed", Date.now());
    log.emit("BATCH_ENDED", { job_id: spec.jobId, batch: providerBatchView(store.batches.get(id) as BatchRow) });
    for (const task of tasks) await this.#host.settleLine(task, outcome);
  }

  /** A batch left `submitting` by a restart: adopted when the provider has it, else its lines go back to pending uncounted. */
  async #recoverLost(batch: BatchRow): Promise<void> {
    const { store } = this.#host;
    let providerId: string | null = null;
    try {
      const owner = await this.#owner(batch); // found only with the credential that submitted it
      providerId = owner ? await owner.api.find(owner.endpoint, batch.id, batch.created_at) : null;
    } catch (err) {
      console.error("could not look for a lost batch; its lines go out again", err);
    }
    const now = Date.now();
    if (providerId) {
      store.batches.submitted(batch.id, providerId, now, now);
      return;
    }
    this.#linesBack(batch, now);
  }

  async #poll(batch: BatchRow): Promise<void> {
    const { store, log } = this.#host;
    const spec = this.#host.spec();
    const providerId = batch.provider_batch_id as string;
    const owner = await this.#owner(batch);
    if (!owner) return this.#disowned(batch);
    const { api, endpoint, work } = owner;
    let state;
    try {
      state = await api.retrieve(endpoint, providerId);
    } catch (err) {
      console.error("could not poll a provider batch; polling again later", providerId, err);
      store.batches.polled(
        batch.id,
        { status: batch.provider_status ?? "unknown", completed: batch.completed, failed: batch.failed },
        Date.now() + this.#pollDelay(batch.polls + 1),
      );
      return;
    }
    const changed = state.completed !== batch.completed || state.failed !== batch.failed || state.status !== batch.provider_status;
    store.batches.polled(batch.id, state, Date.now() + this.#pollDelay(batch.polls + 1));
    if (state.phase === "running") {
      if (changed) log.emit("BATCH_PROGRESS", { job_id: spec.jobId, batch: providerBatchView(store.batches.get(batch.id) as BatchRow) });
      if (batch.cancel_requested && batch.cancelled_at !== null && Date.now() - batch.cancelled_at > this.#cancelWaitMs()) this.#abandon(batch);
      return;
    }
    if (state.phase === "failed")
      return this.#refused(batch.id, {
        kind: "transient",
        error: `The provider refused the batch: ${state.error}`,
        retryAfterMs: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      });
    const compiled = this.#compile(batch.stage, work);
    const forcedTool = work.call.outputSchema?.type === "object";
    const tasks = store.batches.inBatch(batch.id);
    const left = batch.cancel_requested ? store.batches.ofBatch(batch.id).filter((t) => t.token !== `batch:${batch.id}`) : [];
    const byId = new Map([...tasks, ...left].map((t) => [this.#customId(t), t]));
    const read = await api.results(endpoint, providerId, forcedTool, { wanted: new Set(byId.keys()) });
    const matched = matchResults(read.lines, (r) => lineOutcome(r, compiled, work));
    // Ended before its lines are settled: the last line may end the job, whose MAP_COMPLETED stays the last event.
    store.batches.end(batch.id, "ended", Date.now());
    log.emit("BATCH_ENDED", { job_id: spec.jobId, batch: providerBatchView(store.batches.get(batch.id) as BatchRow) });
    for (const repeat of matched.repeats) this.#host.duplicated(byId.get(repeat.customId) as TaskRow, repeat.outcome);
    for (const task of left) await this.#late(batch, task, matched.byId.get(this.#customId(task))?.result, compiled, work);
    for (const task of tasks) {
      const outcome = matched.byId.get(this.#customId(task))?.outcome ?? null;
      if (outcome) await this.#host.settleLine(task, outcome);
      else if (batch.cancel_requested) {
        // A batch we cancelled: its lines that never ran go again (realtime, or in a later batch), not counted.
        store.transaction(() => {
          this.#unattempted(task);
          log.bump({ total_attempts: -1 });
        });
      } else await this.#host.settleLine(task, missingLine(read.cut));
    }
  }

  /**
   * A line of a batch auto cancelled, whose task left for realtime: an answer is the item's result
   * while it has none and no realtime call under way (taken as the batch's line), else billed for
   * nothing (duplicated). A line that never ran costs nothing.
   */
  async #late(batch: BatchRow, task: TaskRow, result: LineResult | undefined, compiled: CompiledCall, work: BatchWork): Promise<void> {
    if (!result || result.kind !== "answer") return;
    const outcome = lineOutcome(result, compiled, work) as AttemptOutcome;
    const { store, log } = this.#host;
    const current = store.task(task.stage, task.idx);
    if (current?.state === "pending" && this.#host.status() === "running") {
      store.transaction(() => {
        this.#inBatch(current, batch.id, Date.now(), { tokens: 0, usd: 0 });
        log.bump({ total_attempts: 1 });
      });
      return this.#host.settleLine(this.#current(current), outcome);
    }
    this.#host.duplicated(task, outcome);
  }

  /** A task starts as a line of a batch: no slot; its token names the batch. */
  #inBatch(row: TaskRow, batchId: string, now: number, reserved: { tokens: number; usd: number }): void {
    this.#host.tasks.apply(row, { type: "dispatch", slot: null, token: `batch:${batchId}`, now }, undefined, undefined, { reserved, batchId });
  }

  /** A line that never ran (its batch was refused or cancelled, or lost before its submission): pending again, the attempt not counted, no batch. */
  #unattempted(row: TaskRow): void {
    this.#host.tasks.apply(row, { type: "withdraw" }, undefined, undefined, { batchId: null });
  }
}

/** Whether a stage's work is batch work (a stage with no work of its own, a pipeline's step markers, is not). */
function isBatch(op: Operator, spec: JobSpec, stage: string): boolean {
  return workOf(op, spec, stage)?.kind === "batch";
}
