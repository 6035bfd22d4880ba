/**
 * Whole jobs' worth of tasks run by the coordinator's own task runner
 * (durable-objects/coordinator/task-runner.ts) on a real coordinator store (a Durable Object's
 * SQLite), with a fake clock and a scripted provider — no copy of the runner. The simulation plays
 * what surrounds the runner as the coordinator does: it dispatches the store's next pending tasks
 * into free slots (a call worker claims each: the machine's `hand`), settles reports through the
 * runner's one path (`spend`, then `settle`; stale ones dropped by `dispatchOf`), sweeps attempts
 * that never reported after `lostAfterMs`, and makes due retries pending with the store's set-wise
 * statement. Besides the call workers' path it runs:
 * - **batch lines** (`lineOf`): dispatched with no slot under a batch token, settled at the batch
 *   price with no jitter, or withdrawn when their batch is refused (`"refused"`);
 * - **agents** (`"spawn"`): the task waits as `child` while its child sub-session runs as a task of
 *   the children stage, and is dispatched again when the child ends;
 * - **restarts** (`restartEvery`): the coordinator's memory (the runner, its log, budget and busy
 *   slots) is thrown away and rebuilt from storage between two turns. A turn's writes commit
 *   together at its end (the output gate), so a crash between any two statements loses the whole
 *   turn: a restart between turns is every crash there can be;
 * - **worker restarts** (`"restart"`): the call worker restarts mid-call and claims its task again
 *   (a second `hand`: the call is re-sent, counted as a loss and a new attempt).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { renderLimits } from "../../../src/config";
import { ZERO } from "../../../src/engine/counters";
import type { AttemptOutcome } from "../../../src/engine/retry-policy";
import type { TaskPolicy, TaskState } from "../../../src/engine/task-machine";
import type { SubtaskSpawn } from "../../../src/engine/types";
import { operatorFor } from "../../../src/operators/registry";
import type { MapJobSpec } from "../../../src/operators/map/plan";
import { BudgetKeeper } from "../../../durable-objects/coordinator/budget";
import { EventHub } from "../../../durable-objects/coordinator/event-hub";
import { eventShape } from "../../../durable-objects/coordinator/event-shapes";
import { JobLog } from "../../../durable-objects/coordinator/job-log";
import { CoordinatorStore, stateOf, type TaskRow } from "../../../durable-objects/coordinator/store";
import { TaskRunner, type Moved } from "../../../durable-objects/coordinator/task-runner";
import { base, call, type Stub } from "./drive";
import { ok } from "../../unit/engine/outcomes";

/** What the provider does with a task's `call`-th call (1, 2, …: each call sent, re-sent ones, refused lines and spawns too): its outcome; `lost` (no report ever); `restart` (its worker restarts mid-call); `refused` (a batch line's batch is refused: it never ran); `spawn` (an agent asks for a child). */
export type Script = (task: number, call: number, now: number) => AttemptOutcome | "lost" | "restart" | "refused" | "spawn";

export interface SimOptions {
  tasks: number;
  concurrency: number;
  policy: TaskPolicy;
  provider: Script;
  /** Which tasks go out as lines of a provider batch (none unless given). */
  lineOf?: (task: number) => boolean;
  /** Models in the job's chain: its own and `chain − 1` fallbacks (1 unless given). */
  chain?: number;
  /** A coordinator restart after about one turn in this many (none unless given). */
  restartEvery?: number;
  latencyMs?: number;
  lostAfterMs?: number;
  random?: () => number;
  /** Stop after this much fake time (a job that never ends must not hang the test). */
  horizonMs?: number;
}

export interface SimEnd {
  success: boolean;
  output: unknown;
  errorKind: string | null;
}

export interface SimTask {
  state: TaskState;
  /** Each time an event ended the task (more than one is a defect), with the result stored. */
  ends: SimEnd[];
  /** When each call went out (re-sent ones too), and how many of them were withdrawn lines or spawns (attempts not counted). */
  dispatches: number[];
  uncounted: number;
  /** What each call got from the provider (its outcome's kind): what a failed check prints. */
  history: string[];
  endedAt: number | null;
  /** Its item's completion events in the job's log. */
  events: number;
}

export interface SimResult {
  tasks: SimTask[];
  now: number;
  maxBusy: number;
  /** Events the runner counted as defects of the engine (refused with no race to explain them). */
  defects: number;
  /** Dispatches of a task before its retry was due: each a defect. */
  early: number;
  restarts: number;
  children: number;
}

type Call = { at: number; stage: string; idx: number; token: string; outcome: ReturnType<Script> };

/** Runs one job of `options.tasks` items in a fresh coordinator's storage. */
export async function simulate(options: SimOptions): Promise<SimResult> {
  const jobId = `job_sim_${crypto.randomUUID().replaceAll("-", "")}`;
  const stub = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(jobId)) as Stub;
  return runInDurableObject(stub, (_instance, state) => run(state.storage, jobId, options));
}

function run(storage: DurableObjectStorage, jobId: string, options: SimOptions): SimResult {
  const { concurrency, policy, provider } = options;
  const latency = options.latencyMs ?? 100;
  const lostAfter = options.lostAfterMs ?? 5_000;
  const random = options.random ?? Math.random;
  const horizon = options.horizonMs ?? 24 * 3600_000;
  const lineOf = options.lineOf ?? (() => false);
  const fallbacks = Array.from({ length: (options.chain ?? 1) - 1 }, (_, i) => `openai-compatible/fallback-${i + 1}`);
  const spec: MapJobSpec = {
    ...base(jobId, "tenant_sim"),
    type: "map",
    call: call(),
    concurrency,
    maxRetries: policy.maxRetries,
    maxWaitMs: policy.maxWaitMs,
    fallbacks,
  };
  const op = operatorFor(spec);
  const plan = op.plan(
    spec,
    Array.from({ length: options.tasks }, (_, i) => `item ${i}`),
  );
  const first = new CoordinatorStore(storage);
  first.transaction(() => {
    first.setMeta("spec", spec);
    first.setMeta("status", "running");
    first.setMeta("counters", ZERO);
    first.insertStages(plan.stages);
    first.insertTasks(plan.tasks);
  });

  /** The coordinator's memory: what a restart loses and rebuilds from storage. */
  const boot = (store: CoordinatorStore) => {
    const busySlots = new Set(store.running().flatMap((row) => (row.slot === null ? [] : [row.slot])));
    const log = new JobLog(store, new EventHub(60_000), eventShape(op));
    const budget = new BudgetKeeper(store, renderLimits(env), env);
    return { store, busySlots, runner: new TaskRunner({ env, store, log, budget, op, busySlots, spec: () => spec }) };
  };
  let job = boot(first);
  const tasks: SimTask[] = plan.tasks.map(() => ({
    state: stateOf(first.task("items", 0) as TaskRow),
    ends: [],
    dispatches: [],
    uncounted: 0,
    history: [],
    endedAt: null,
    events: 0,
  }));
  const result: SimResult = { tasks, now: 0, maxBusy: 0, defects: 0, early: 0, restarts: 0, children: 0 };
  const inFlight: Call[] = [];
  let now = 0;
  let tokens = 0;
  let turns = 0;

  /** One turn ends: its writes commit; now and then the coordinator restarts before the next. */
  const turn = () => {
    job.store.flushSoon();
    if (options.restartEvery && ++turns % options.restartEvery === 0) {
      job = boot(new CoordinatorStore(storage));
      result.restarts++;
    }
  };

  /** What the runner answered for an item's task: its end, if the event ended it. */
  const moved = (row: TaskRow, answer: Moved | null) => {
    if (!answer || row.stage !== "items") return;
    const task = tasks[row.idx] as SimTask;
    if (answer.task.state !== "done") return;
    const stored = job.store.task(row.stage, row.idx) as TaskRow;
    task.ends.push({ success: stored.success === 1, output: JSON.parse(stored.output ?? "null") as unknown, errorKind: stored.error_kind });
    task.endedAt = now;
  };

  const dispatch = () => {
    for (const row of job.store.nextPending(10_000)) {
      const line = row.stage === "items" && lineOf(row.idx);
      if (!line && job.busySlots.size >= concurrency) continue;
      if (row.ready_at > now) result.early++;
      let slot: number | null = null;
      if (!line) for (slot = 0; job.busySlots.has(slot); slot++);
      const token = line ? `batch:${++tokens}` : `t${++tokens}`;
      const answer = job.runner.apply(row, { type: "dispatch", slot, token, now }, undefined, undefined, {
        reserved: { tokens: 0, usd: 0 },
        ...(line ? { batchId: token } : {}),
      });
      if (!answer) continue;
      if (slot !== null) job.busySlots.add(slot);
      result.maxBusy = Math.max(result.maxBusy, job.busySlots.size);
      if (!line) job.runner.apply(job.store.task(row.stage, row.idx) as TaskRow, { type: "hand", why: "claimed", now }); // its worker's claim
      send(row, token);
      turn();
    }
  };

  /** The task's call goes out (again, after its worker restarted): an attempt under way. */
  const send = (row: TaskRow, token: string) => {
    const task = row.stage === "items" ? (tasks[row.idx] as SimTask) : null;
    task?.dispatches.push(now);
    const outcome = task ? provider(row.idx, task.dispatches.length, now) : ok("child");
    task?.history.push(typeof outcome === "string" ? outcome : outcome.kind);
    inFlight.push({ at: outcome === "lost" && !token.startsWith("batch:") ? Infinity : now + latency, stage: row.stage, idx: row.idx, token, outcome });
  };

  /** An attempt's end: its report (settled through the runner's one path), its worker's restart, or its batch refused. */
  const settle = (c: Call) => {
    const row = job.runner.dispatchOf(c.stage, c.idx, c.token);
    if (!row) return; // stale
    const line = c.token.startsWith("batch:");
    const task = c.stage === "items" ? (tasks[c.idx] as SimTask) : null;
    // A batch line has no worker to restart or lose it: a line that never ran is its batch's refusal.
    if (line && (c.outcome === "lost" || c.outcome === "restart" || c.outcome === "spawn")) c.outcome = "refused";
    if (c.outcome === "lost") return;
    if (c.outcome === "restart") {
      const answer = job.runner.apply(row, { type: "hand", why: "restarted", now });
      moved(row, answer);
      if (answer?.task.state === "running") send(row, c.token);
      return;
    }
    if (c.outcome === "refused") {
      if (task) task.uncounted++;
      return moved(row, job.runner.apply(row, { type: "withdraw" }, undefined, undefined, { batchId: null }));
    }
    const outcome = c.outcome === "spawn" ? spawnOf(row) : c.outcome;
    if (c.outcome === "spawn") {
      result.children++;
      if (task) task.uncounted++;
    }
    const usage = job.runner.spend(row, outcome, line ? "batch" : "realtime");
    moved(row, job.runner.settle(row, outcome, usage, now, line ? () => 0 : random));
  };

  /** The sweep: a dispatch with no report after lostAfterMs is lost (a batch line's batch is the batch runner's). */
  const sweep = () => {
    for (const row of job.store.running()) {
      if (row.batch_id || (row.dispatched_at ?? 0) + lostAfter > now) continue;
      moved(row, job.runner.apply(row, { type: "lost", why: "no report in time" }));
      turn();
    }
  };

  dispatch();
  // Bounded by count too: a runner that never settles fails the test instead of hanging it.
  for (let steps = 0; now <= horizon; steps++) {
    if (steps > 100 * options.tasks + 1_000) throw new Error(`the simulation did not settle: at ${now} ms, ${inFlight.length} calls in flight`);
    const nextReport = Math.min(...inFlight.map((c) => c.at));
    const nextLoss = Math.min(
      ...job.store
        .running()
        .filter((r) => !r.batch_id)
        .map((r) => (r.dispatched_at ?? 0) + lostAfter),
    );
    const next = Math.min(nextReport, job.store.nextWaitingAt() ?? Infinity, nextLoss);
    if (next === Infinity) break;
    now = Math.max(now, next);
    for (const c of inFlight.filter((q) => q.at <= now)) {
      inFlight.splice(inFlight.indexOf(c), 1);
      settle(c);
      turn();
    }
    sweep();
    job.store.releaseDue(now);
    dispatch();
  }
  job.store.flushSoon();
  for (const [idx, task] of tasks.entries()) task.state = stateOf(job.store.task("items", idx) as TaskRow);
  for (const event of job.store.events.after(0)) {
    const data = JSON.parse(event.data) as { result?: { index?: number } };
    const index = data.result?.index;
    if (event.name === "MAP_ITEM_COMPLETED" && typeof index === "number") (tasks[index] as SimTask).events++;
  }
  result.now = now;
  result.defects = job.runner.defects();
  return result;
}

function spawnOf(row: TaskRow): AttemptOutcome {
  const spawn: SubtaskSpawn = {
    sessionId: `child-${row.idx}-${row.attempts}`,
    parentSessionId: `parent-${row.idx}`,
    prompt: "look it up",
    depth: 1,
    ancestors: [`f${row.idx}`],
    deadline: Number.MAX_SAFE_INTEGER,
    inheritedTokens: 0,
  };
  return { kind: "spawn", spawn, usage: { input_tokens: 1, output_tokens: 1 } };
}
