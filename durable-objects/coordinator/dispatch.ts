/**
 * The coordinator's dispatch (./job-run.ts): the next pending tasks into free slots, critical path
 * first, each past its model's circuit (./circuits.ts: an open one sends a task with a fallback to
 * its next model), its model's rate pacer (a lease), the invocation's bound on begins and the
 * budget's reservation; a slot's worker gets a reference to begin (never awaited), and the task
 * dispatched into the pulling slot is answered instead (the pull protocol).
 */
import { randomBase32 } from "../../src/lib/ids";
import { BEGINS_PER_INVOCATION, DEFAULT_MAX_WAIT_SECS } from "../../src/engine/limits";
import { executorOf } from "../../src/engine/executors";
import { deploymentKey } from "../../src/llm/credential";
import { parseModel } from "../../src/llm/models";
import { sharesCachedPrefix } from "../../src/llm/prompt-cache";
import type { CallSpec, JobStatus, Operator, PulledTask, StageWork, TaskClaim, TaskRef } from "../../src/engine/types";
import type { JobSpec } from "../../src/operators/registry";
import { agentSession } from "../../src/objects";
import type { BudgetKeeper } from "./budget";
import type { Circuits } from "./circuits";
import type { Pools } from "./pools";
import { taskVars } from "./claims";
import type { ConcurrencyLink } from "./concurrency";
import type { JobLog } from "./job-log";
import type { PacingLink } from "./pacing";
import type { Pacings } from "./pacings";
import type { CoordinatorStore, TaskRow } from "./store";
import type { TaskRunner } from "./task-runner";
import type { WorkerLink } from "./workers";

const BATCH_GATHER_MS = 100; // tasks of a batch stage readied within this go out in one provider batch

/** What dispatching needs of its job. */
export interface DispatchingJob {
  readonly env: Env;
  readonly spec: JobSpec;
  readonly status: JobStatus;
  readonly op: Operator;
  readonly store: CoordinatorStore;
  readonly log: JobLog;
  readonly budget: BudgetKeeper;
  readonly concurrency: ConcurrencyLink;
  readonly pacing: Pacings;
  readonly workers: WorkerLink;
  readonly batches: { hasReady(): boolean };
  readonly tasks: TaskRunner;
  readonly circuits: Circuits;
  readonly pools: Pools;
  readonly busySlots: Set<number>;
  round(): number;
  batchStages(): string[];
  work(stage: string, route: number): StageWork;
  claimOf(task: TaskRow, vars?: Record<string, unknown>): TaskClaim;
  wake(at: number): void;
  budgetExhausted(): void;
  lost(row: TaskRow, why: string): Promise<void>;
}

/**
 * Fills free slots with pending tasks, critical path first. Never awaits a worker: `begin` only
 * stores the reference. The task dispatched into `pullSlot` is not begun: it is answered, for the
 * slot's worker to take in its report's answer.
 */
export function dispatchPending(run: DispatchingJob, pullSlot: number | null): PulledTask | null {
  const spec = run.spec;
  if (run.status !== "running") return null;
  const room = run.concurrency.cap(spec) - run.busySlots.size; // the provider's limit for the tenant, when one holds
  if (room <= 0) return null;
  const unleased = new Map<PacingLink, number>(); // calls that could start but have no lease from their model's rate pacer
  const batchStages = run.batchStages();
  if (batchStages.length > 0 && run.batches.hasReady()) {
    // The batch runner submits them from the alarm, together with the others readied in this moment.
    run.wake(Date.now() + BATCH_GATHER_MS);
  }
  const rows = run.store.nextPending(room, batchStages);
  if (rows.length === 0) return null;
  const free: number[] = []; // as many free slots as there are tasks to start, the puller's first
  if (pullSlot !== null && !run.busySlots.has(pullSlot)) free.push(pullSlot);
  for (let slot = 0; slot < spec.concurrency && free.length < rows.length; slot++) if (!run.busySlots.has(slot) && slot !== pullSlot) free.push(slot);
  let next: PulledTask | null = null;
  const now = Date.now();
  const round = run.round();
  let begun = 0;
  for (const [i, row] of rows.slice(0, free.length).entries()) {
    const work = run.work(row.stage, row.route); // on the model of its chain it calls now: its price, its pacing
    const executor = executorOf(work);
    // The deployment of the model's pool it goes to (./pools.ts; 0 without one): a deployment is paced and circuited as a model of its own.
    const base = run.tasks.modelOf(row);
    const deployment = pickDeployment(run, row, base, work, now, unleased);
    const model = deploymentKey(base, deployment);
    // A model whose circuit is open (./circuits.ts) gets no call: a task with a model after it in its
    // chain goes there; one without waits for the cool-down's end, as on a 429 (back-pressure).
    const rerouted = row.route + 1 < run.tasks.chainOf(row.stage).length;
    if (run.circuits.state(model, now) === "open") {
      if (rerouted) fallBack(run, row, now);
      else run.wake(run.circuits.wakeAt(model, spec.maxWaitMs ?? DEFAULT_MAX_WAIT_SECS * 1000));
      continue;
    }
    const pacing = executor.paced ? run.pacing.of(model) : null;
    if (pacing && pacing.room(spec) < 1) {
      unleased.set(pacing, (unleased.get(pacing) ?? 0) + 1); // it waits for a lease (not counted as begun: a wait must not set the next alarm at once)
      continue;
    }
    const pulled = pullSlot !== null && free[i] === pullSlot && !executor.session;
    if (!pulled && begun++ === BEGINS_PER_INVOCATION) {
      // One invocation's subrequests are bounded: the rest start in the next alarm, right away.
      run.wake(Date.now());
      return next;
    }
    let known: Record<string, unknown> | undefined; // computed once, for the budget and the pulled claim
    const vars = () => (known ??= taskVars(spec, run.op, run.store, row));
    const reserved = run.budget.reserve(spec.budget, row.stage, work, vars);
    // Calls in flight may settle below what they reserve (a cached answer spends nothing): wait for them.
    if (reserved === null) {
      if (run.store.reserved().tokens === 0) run.budgetExhausted();
      return next;
    }
    if (!run.circuits.admit(model, now)) {
      if (rerouted) fallBack(run, row, now); // half open, its one probe under way: the others go on, or wait for its report
      continue;
    }
    const slot = free[i] as number;
    const token = randomBase32(10);
    if (!run.tasks.apply(row, { type: "dispatch", slot, token, now, handed: pulled }, undefined, undefined, { reserved })) continue;
    run.busySlots.add(slot);
    pacing?.started(spec);
    run.log.bump({ total_attempts: 1 });
    const ref: TaskRef = { jobId: spec.jobId, stage: row.stage, index: row.idx, attempt: row.attempts + 1, token, slot, sessionId: row.session_id, round };
    if (row.route > 0) ref.route = row.route;
    if (work.kind === "call" && work.call.serviceTier) ref.tier = work.call.serviceTier;
    if (deployment > 0) ref.deployment = deployment;
    if (pulled) {
      next = { ref, claim: run.claimOf(row, known), setup: null };
      continue;
    }
    const worker = executor.session && row.session_id ? agentSession(run.env, row.session_id) : run.workers.worker(spec, slot);
    worker.begin(ref).catch(async (err: unknown) => {
      console.error("dispatch failed; will retry", err);
      const current = run.store.task(row.stage, row.idx);
      if (current?.token !== token || current.state !== "running") return;
      await run.lost(current, "its worker could not be reached");
      run.wake(Date.now() + 1_000);
    });
  }
  for (const [pacing, calls] of unleased) pacing.want(spec, calls);
  return next;
}

/**
 * Which deployment of its model's pool a task's call goes to: one whose circuit is not open and
 * whose pacer has room, by weight; a stage whose calls share a cacheable prefix sticks to its one
 * deployment while that is up (and waits for its leases). A deployment passed over for want of a
 * lease asks its pacer for one all the same (`unleased`), so each deployment keeps leasing its share.
 */
function pickDeployment(run: DispatchingJob, row: TaskRow, model: string, work: StageWork, now: number, unleased: Map<PacingLink, number>): number {
  const provider = parseModel(model).provider;
  if (work.kind !== "call" || run.pools.size(provider) < 2) return 0;
  const sticky = stickyCall(work.call);
  return run.pools.pick(provider, row.stage, sticky, (d) => {
    const key = deploymentKey(model, d);
    if (run.circuits.state(key, now) === "open") return false;
    if (sticky) return true; // a sticky stage leaves its deployment only while it is down: it waits for that one's leases
    const pacing = run.pacing.of(key);
    if (pacing.room(run.spec) >= 1) return true;
    unleased.set(pacing, Math.max(1, unleased.get(pacing) ?? 0));
    return false;
  });
}

const stickyCalls = new WeakMap<CallSpec, boolean>(); // a stage's call spec, read once: its template and system prompt do not change

/** Whether a stage's calls share a prefix the provider would cache: they stay on one deployment of a pool. */
function stickyCall(call: CallSpec): boolean {
  let known = stickyCalls.get(call);
  if (known === undefined)
    stickyCalls.set(call, (known = call.promptCache !== false && sharesCachedPrefix(call.model, call.systemPrompt, call.promptTemplate)));
  return known;
}

/** A task whose model's circuit is open makes no call there: it goes to the next model of its chain, dispatched in the next turn. */
function fallBack(run: DispatchingJob, row: TaskRow, now: number): void {
  run.tasks.apply(row, { type: "fall-back" });
  run.wake(now);
}
