/**
 * The job as its JobCoordinator runs it: the state the coordinator keeps in memory beside its
 * storage (spec, status, busy slots, the next alarm) and the engine that moves it on — dispatch
 * (./dispatch.ts), settling reports, what the operator says follows, the alarm's sweep
 * (./sweep.ts); its tasks' transitions are ./task-runner.ts (whose answers `follow` acts on), its
 * own (begin, pause, end) ./lifecycle.ts, its pacing per model ./pacings.ts, its alarm
 * ./alarm.ts. The Durable Object (../job-coordinator.ts) is its RPC surface; a purge replaces the
 * run with a fresh one.
 */
import { renderLimits } from "../../src/config";
import { isThrottle, type AttemptOutcome } from "../../src/engine/retry-policy";
import {
  type Advance,
  type ErrorKind,
  type JobEnd,
  type JobStatus,
  type Operator,
  type PlanReader,
  type PulledTask,
  type StageSetup,
  type StageWork,
  type TaskClaim,
} from "../../src/engine/types";
import { operatorFor, type JobSpec } from "../../src/operators/registry";
import { routedWork } from "../../src/engine/fallbacks";
import type { JobProgress } from "../../src/db/jobs";
import { agentSession } from "../../src/objects";
import { sendMessage } from "../../src/queue-messages";
import type { EventHub } from "./event-hub";
import { CoordinatorStore, type TaskRow } from "./store";
import { BudgetKeeper } from "./budget";
import { ConcurrencyLink } from "./concurrency";
import { pacedModels, type Pacings } from "./pacings";
import { credentialOf } from "../../src/llm/credential";
import { parseModel } from "../../src/llm/models";
import type { JobPacingView } from "../../src/engine/pacing";
import { WorkerLink } from "./workers";
import { D1Mirror } from "./d1-mirror";
import { TaskRunner, type CallMode, type Moved } from "./task-runner";
import { runProgress } from "./progress";
import { JobLog } from "./job-log";
import { eventShape } from "./event-shapes";
import { Setups, claimOf, planReader } from "./claims";
import { withExecution } from "../../src/engine/execution";
import { BatchRunner } from "./batch-runner";
import { concurrencyLink, pacingLinks } from "./links";
import { beginJob, finishJob, pauseJob } from "./lifecycle";
import { JobAlarm } from "./alarm";
import { dispatchPending } from "./dispatch";
import { Circuits, COOL_DOWN_MS } from "./circuits";
import { Pools } from "./pools";
import { JobTracer } from "./tracer";
import { deploymentKey, splitDeploymentKey } from "../../src/llm/credential";
import { recordCircuit } from "../../src/db/providers";
import { sweepJob } from "./sweep";

const QUEUE_MIN_DELAY_MS = 1_000; // shorter backoffs use the alarm alone: Queue delays are whole seconds

/** The slot of a call worker whose report takes its slot's next task in the answer (null: no pull). */
export type PullSlot = number | null;

/** What comes after a task moved, unless it ended: a dispatch (a report freed a slot), the alarm (a batch line goes out in a later batch), nothing (the caller goes on). */
type Then = "dispatch" | "alarm" | "nothing";

export class JobRun {
  readonly store: CoordinatorStore;
  readonly mirror: D1Mirror;
  readonly log: JobLog;
  readonly budget: BudgetKeeper;
  readonly concurrency: ConcurrencyLink;
  readonly pacing: Pacings;
  readonly workers: WorkerLink;
  readonly batches: BatchRunner;
  readonly tasks: TaskRunner;
  readonly circuits: Circuits; // per model of its fallback chains, per deployment of a pool (./circuits.ts)
  readonly pools: Pools; // the deployment pools of the providers it calls (./pools.ts)
  readonly tracer: JobTracer; // its trace's spans, exported to its collectors (./tracer.ts)
  readonly busySlots = new Set<number>();
  readonly waiters: (() => void)[]; // callers of waitForEnd
  readonly hub: EventHub;
  spec: JobSpec; // a recover or resume may change it
  readonly op: Operator;
  status: JobStatus;
  finalized: boolean;
  readonly #setups: Setups;
  readonly #ladder: { realtime: Set<string>; flex: Set<string> }; // execution mode auto: the batch stages moved off batches, those on flex (meta realtime_stages, flex_stages)
  readonly #alarm: JobAlarm;
  #ending: Promise<void> | null = null; // an end begun inside the synchronous dispatch; the RPC or alarm that caused it waits for it

  /** The job of `spec`, stored in `parts.store` already (started, or woken from storage). */
  constructor(
    private readonly ctx: DurableObjectState,
    readonly env: Env,
    parts: { hub: EventHub; store: CoordinatorStore; waiters: (() => void)[] },
    spec: JobSpec,
    alarmAt: number | null,
  ) {
    this.hub = parts.hub;
    this.store = parts.store;
    this.waiters = parts.waiters;
    this.mirror = new D1Mirror(env.DB, this.store, () => this.progress());
    this.spec = spec;
    this.#ladder = { realtime: new Set(this.store.getMeta("realtime_stages") ?? []), flex: new Set(this.store.getMeta("flex_stages") ?? []) };
    this.op = withExecution(operatorFor(spec), this.#ladder);
    this.status = this.store.getMeta("status") ?? "queued";
    this.finalized = this.store.getMeta("finalized") ?? false;
    this.log = new JobLog(this.store, this.hub, eventShape(this.op));
    this.budget = new BudgetKeeper(this.store, renderLimits(env), env);
    this.concurrency = concurrencyLink(this);
    this.pacing = pacingLinks(this);
    this.workers = new WorkerLink(env, this.store);
    this.tasks = new TaskRunner({ env, store: this.store, log: this.log, budget: this.budget, op: this.op, busySlots: this.busySlots, spec: () => this.spec });
    this.batches = new BatchRunner({
      env,
      store: this.store,
      log: this.log,
      budget: this.budget,
      op: this.op,
      spec: () => this.spec, // the job's current spec and status: a recover or resume changes them
      status: () => this.status,
      tasks: this.tasks,
      settleLine: (task, outcome) => this.settleLine(task, outcome),
      duplicated: (task, outcome) => this.billedForNothing(task, outcome, "batch"),
      budgetExhausted: () => this.budgetExhausted(),
      giveUp: (task, error, kind) => this.giveUp(task, error, kind),
      ladder: this.#ladder,
      startedAt: () => this.store.getMeta("started_at_ms") ?? Date.now(),
    });
    this.#setups = new Setups(env);
    this.pools = new Pools(env, () => this.spec.tenantId);
    this.tracer = new JobTracer(env, () => this.spec);
    this.circuits = new Circuits(
      (key, circuit, at) => this.#circuitChanged(key, circuit, at),
      (key) => this.pacing.peek(key)?.sharedOpenUntil() ?? 0,
    );
    for (const row of this.store.running()) if (row.slot !== null) this.busySlots.add(row.slot);
    this.#alarm = new JobAlarm(ctx.storage, alarmAt);
  }

  /** A stage's work and its provider endpoint (./coordinator/claims.ts). */
  setup(stage: string, route = 0): Promise<StageSetup | null> {
    return this.#setups.get(this.round(), this.work(stage, route));
  }

  /** What a stage's calls do, on the `route`-th model of its fallback chain (../../src/engine/fallbacks.ts). */
  work(stage: string, route = 0): StageWork {
    const work = this.op.work(this.spec, this.store.workStage(stage));
    return route === 0 ? work : routedWork(work, this.tasks.modelOf({ stage, route }));
  }

  claimOf(task: TaskRow, vars?: Record<string, unknown>): TaskClaim {
    return claimOf(this.spec, this.op, this.store, task, vars);
  }

  /**
   * A worker's or a session's report of its attempt (the task as read now, running this dispatch):
   * the pacing and the adaptive concurrency learn from it, the task runner settles it, and the job
   * acts on what follows. Answers the slot's next task when the worker pulls one (`pullSlot`).
   */
  async settleReport(spec: JobSpec, task: TaskRow, outcome: AttemptOutcome, pullSlot: PullSlot): Promise<PulledTask | null> {
    const usage = this.tasks.spend(task, outcome, "realtime");
    const base = this.tasks.modelOf(task);
    const model = deploymentKey(base, outcome.deployment); // a pool's deployment is paced and circuited as a model of its own
    this.circuits.observe(model, outcome, Date.now(), `${task.stage}:${task.idx}`); // shared through its pacer even where this job has no other model to go to
    this.tracer.call(task, () => this.work(task.stage, task.route), base, outcome, usage, Date.now());
    const pacer = this.pacing.of(model);
    pacer.observe(spec, outcome);
    // Adaptive concurrency is the rule only where no rate limit is known (contract v3): a throttle of a
    // paced model is the pacer's news (its retry-after, its headers), never a cut of the calls in flight.
    const adaptive = !(pacer.paces && isThrottle(outcome));
    // The task holds its slot until the runner frees it: the calls in flight besides it.
    const others = this.busySlots.size - (task.slot !== null && this.busySlots.has(task.slot) ? 1 : 0);
    const asked = adaptive ? this.concurrency.observe(spec, outcome, others, task.dispatched_at ?? Date.now()) : null;
    if (asked) {
      await asked;
      // Other calls ran meanwhile: the job may have ended (its running tasks released) or been recovered.
      const current = task.token === null ? null : this.tasks.dispatchOf(task.stage, task.idx, task.token);
      if ((this.status !== "running" && this.status !== "paused") || !current) return null;
      task = current;
    }
    return this.follow(this.tasks.settle(task, outcome, usage, Date.now(), Math.random), "dispatch", pullSlot);
  }

  /** One line of a provider batch ended (./batch-runner.ts): settled as a report is, at the batch price. */
  async settleLine(task: TaskRow, outcome: AttemptOutcome): Promise<void> {
    // No jitter: a batch's lines that go again wait the same backoff, and go out in one later batch.
    const usage = this.tasks.spend(task, outcome, "batch");
    this.tracer.call(task, () => this.work(task.stage, task.route), this.tasks.modelOf(task), outcome, usage, Date.now());
    await this.follow(
      this.tasks.settle(task, outcome, usage, Date.now(), () => 0),
      "alarm",
    );
  }

  /** A call billed for an item that had its result another way (./task-runner.ts): counted apart, mirrored. */
  billedForNothing(task: TaskRow, outcome: AttemptOutcome, mode: CallMode): void {
    if (this.tasks.billedForNothing(task, outcome, mode)) this.mirror.schedule();
  }

  /**
   * What the job does after one of its tasks moved (./task-runner.ts answers it as data): the
   * operator's next steps once a task ended, a session stopped, a pause, the alarm (and a Queue
   * message) for a retry, a child's stage started; then what `then` says. A batch line's task goes
   * out in a later batch: the alarm submits it once its backoff is over. Answers a pulled task.
   */
  async follow(moved: Moved | null, then: Then = "nothing", pullSlot: PullSlot = null): Promise<PulledTask | null> {
    if (!moved) return null;
    if (moved.stopSession) this.stopSession(moved.stopSession);
    if (moved.advance) {
      this.mirror.schedule();
      return this.afterChange(moved.advance, pullSlot);
    }
    if (moved.pause) {
      if (this.status === "running") pauseJob(this, moved.pause);
      return null;
    }
    if (then === "alarm") {
      this.wake(moved.wake ?? Date.now());
      return null;
    }
    if (moved.spawned) {
      this.startStagesWithWork();
      this.mirror.schedule();
    }
    if (moved.wake !== null) await this.#wakeForRetry(moved.wake);
    return then === "dispatch" ? this.dispatchAndSettle(pullSlot) : null;
  }

  /**
   * A retry is due at `at`: the alarm wakes the job then. A longer backoff also sends a Queue
   * message, a second timer; it can come later (whole seconds, delivered in batches), so it is not the one waited for.
   */
  async #wakeForRetry(at: number): Promise<void> {
    const delayMs = at - Date.now();
    if (delayMs >= QUEUE_MIN_DELAY_MS) {
      await sendMessage(this.env, { type: "wake_job", job_id: this.spec.jobId }, Math.ceil(delayMs / 1000)).catch((err: unknown) =>
        console.error("queue send failed; the alarm wakes the job", err),
      );
    }
    this.wake(at);
  }

  /** The job starts (./lifecycle.ts). */
  begin(): Promise<void> {
    return beginJob(this);
  }

  /** The job's model's limits: its pacer (which reads the credential) first, then the adaptive limiter of that credential. */
  async joinLimits(spec: JobSpec, inFlight: number): Promise<void> {
    await this.tracer.load(); // its collectors, before its first call is settled (never throws)
    await this.#joinPacer(spec);
    await this.concurrency.join(spec, inFlight);
  }

  /** The job starts: its calls' credential, and the pacer's limits for it (a pacer or D1 that fails leaves the job unpaced). */
  async #joinPacer(spec: JobSpec): Promise<void> {
    try {
      const credential = await credentialOf(this.env, spec.tenantId, spec.model);
      this.#setups.prime(this.round(), parseModel(spec.model).provider, credential.endpoint);
      this.tracer.server(parseModel(spec.model).provider, credential.endpoint?.baseUrl ?? null);
      const models = pacedModels(this.op, spec, this.store.stages());
      await Promise.all([...new Set(models.map((m) => parseModel(m).provider))].map((provider) => this.pools.load(provider)));
      // Each deployment of a pool is paced by its own limits: its pacer joined with the model's.
      const deployments = models.flatMap((m) => Array.from({ length: this.pools.size(parseModel(m).provider) - 1 }, (_, d) => deploymentKey(m, d + 1)));
      await this.pacing.join(spec, [...models, ...deployments], credential);
    } catch (err) {
      console.error("could not join the rate pacer; the job is not paced", err);
    }
  }

  /**
   * The job's circuit for a model (or a pool's deployment of it) changed: its rate pacer tells the
   * other jobs on the credential (./circuits.ts), and a pool deployment's change is recorded for
   * GET /v1/providers (best effort; never holds the job).
   */
  #circuitChanged(key: string, circuit: "open" | "closed", at: number): void {
    this.pacing.of(key).reportCircuit(this.spec, circuit === "open" ? at + COOL_DOWN_MS : 0);
    const { model, deployment } = splitDeploymentKey(key);
    const provider = parseModel(model).provider;
    if (this.pools.size(provider) < 2) return;
    recordCircuit(this.env.DB, this.spec.tenantId, provider, deployment, model, circuit, at).catch((err: unknown) =>
      console.error("could not record a deployment's circuit", err),
    );
  }

  /** The pacing the API shows: the pacer's, or `adaptive` while adaptive concurrency alone limits the job. */
  pacingView(spec: JobSpec): JobPacingView {
    const view = this.pacing.view();
    if (view.source !== null || this.concurrency.cap(spec) >= spec.concurrency) return view;
    return { ...view, source: "adaptive" };
  }

  reader(): PlanReader {
    return planReader(this.store);
  }

  /**
   * Applies what the operator said follows: stage sizes now known, tasks made ready, tasks it
   * finished itself (each may lead to more), perhaps the job's end.
   */
  async afterChange(first: Advance | null, pullSlot: PullSlot = null): Promise<PulledTask | null> {
    const queue: Advance[] = first ? [first] : [];
    for (let advance = queue.shift(); advance; advance = queue.shift()) {
      for (const [stage, total] of Object.entries(advance.totals ?? {})) this.store.setStageTotal(stage, total);
      const readied = new Set<string>(); // stages a task of which became ready just now
      for (const seed of [...advance.ready, ...(advance.local ?? [])]) if (this.store.makeReady(seed)) readied.add(seed.stage);
      if (readied.size > 0) this.startStagesWithWork(readied);
      for (const local of advance.local ?? []) {
        const row = this.store.task(local.stage, local.index) as TaskRow;
        if (local.keys) this.store.index.file(local.stage, local.index, local.keys); // before its own advance reads them
        const moved = this.tasks.apply(row, { type: "local", output: local.output });
        if (moved?.advance) queue.push(moved.advance);
      }
      if ((advance.local?.length ?? 0) > 0) this.mirror.schedule();
      if (advance.end) {
        await this.#end(advance.end);
        return null;
      }
    }
    return this.dispatchAndSettle(pullSlot);
  }

  /** Stages still pending that now have work get STAGE_STARTED (staged jobs); `readied`: the only stages that can have gained work. */
  startStagesWithWork(readied: Set<string> | null = null): void {
    // Those readied are looked up by name (a batch readies its next element with every report), in plan order.
    const stages = readied ? [...readied].flatMap((name) => this.store.stage(name) ?? []).sort((x, y) => x.ord - y.ord) : this.store.stages();
    for (const stage of stages) {
      if (stage.status !== "pending") continue;
      if (!readied && !this.store.stageHasWork(stage.name)) continue;
      this.store.setStageStatus(stage.name, "running");
      if (stage.kind !== "children") this.log.stageStarted(this.spec.jobId, stage);
    }
  }

  /** Dispatches, then waits for an end the dispatch began (a budget that ran out with `fail`). Answers the task pulled into `pullSlot`, if any. */
  async dispatchAndSettle(pullSlot: PullSlot = null): Promise<PulledTask | null> {
    const next = dispatchPending(this, pullSlot);
    const ending = this.#ending;
    if (ending) {
      await ending;
      this.#ending = null;
    }
    return next;
  }

  /** The stages whose tasks go out in provider batches (none unless the job's execution mode says so). */
  batchStages(): string[] {
    return this.spec.execution ? this.batches.stages() : [];
  }

  /** A pending task fails where it waits, without another call (the task machine's give-up), and what follows is applied. */
  async giveUp(row: TaskRow, error: string, errorKind: ErrorKind): Promise<void> {
    await this.follow(this.tasks.apply(row, { type: "give-up", error, errorKind }));
  }

  /** The next call does not fit the budget: pause the job (./lifecycle.ts), or end it `failed` (`on_exhausted`). */
  budgetExhausted(): void {
    if (this.spec.budget?.onExhausted === "fail") {
      const message = "The token budget cannot fit the next call.";
      this.#ending ??= this.#end({ status: "failed", output: null, error: { code: "budget_exhausted", message, stage: null, index: null, step: null } });
      return;
    }
    pauseJob(this);
  }

  /** A dispatch that will never report: the machine says whether the task goes again or is quarantined (../../src/engine/task-machine.ts). */
  async lost(row: TaskRow, why: string): Promise<void> {
    await this.follow(this.tasks.apply(row, { type: "lost", why }));
  }

  /** Its current turn is its last; not waited for. */
  stopSession(sessionId: string): void {
    agentSession(this.env, sessionId)
      .stop()
      .catch((err: unknown) => console.error("could not stop a session", err));
  }

  /** The operator ended the job (or the budget did): keep its output and failure context, then finish. */
  async #end(end: JobEnd): Promise<void> {
    this.store.transaction(() => {
      this.store.setMeta("output", end.output ?? null);
      this.store.setMeta("error", end.error);
      if (end.error?.stage) this.store.setStageStatus(end.error.stage, "failed");
    });
    await this.finish(end.status);
  }

  /** The job ends with `status` (./lifecycle.ts). */
  finish(status: JobStatus): Promise<void> {
    return finishJob(this, status);
  }

  /** The alarm is gone (the job's end deleted it). */
  clearAlarm(): Promise<void> {
    return this.#alarm.clear();
  }

  /** The job as D1 shows it: status, counters, stages, output, error, budget (./progress.ts). */
  progress(): { jobId: string; progress: JobProgress } {
    return { jobId: this.spec.jobId, progress: runProgress(this) };
  }

  round(): number {
    return this.store.getMeta("round") ?? 1;
  }

  setStatus(status: JobStatus): void {
    this.status = status;
    this.store.setMeta("status", status);
  }

  /** The job must be woken by `at` (./alarm.ts: the one owner of the coordinator's alarm). */
  wake(at: number): void {
    this.#alarm.want(at);
  }

  /** The alarm: the job's start, its sweep while it runs, the end's follow-ups after it (./sweep.ts). */
  async alarm(): Promise<void> {
    this.#alarm.fired();
    const next = await sweepJob(this);
    if (next !== null) this.wake(next);
  }
}
