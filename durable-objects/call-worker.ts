/**
 * CallWorker: one slot of a job's worker pool for call stages (any operator). A job with
 * concurrency C has C slots (`<job_id>:<slot>`), each running one attempt of one task at a time in
 * its own invocation, so no invocation holds more than one outgoing model connection.
 *
 * Lifecycle of an attempt: `begin(ref)` stores the task reference and sets an alarm for now, then
 * returns (the coordinator never waits on a model call). The alarm claims the task's inputs from
 * the coordinator (a stale dispatch gets nothing and does no work), runs the attempt, stores the
 * outcome, then reports it. If the report fails the alarm throws and the platform retries it; the
 * stored outcome is reported again without a second model call.
 *
 * Pull: the answer to a report may be the slot's next task, claimed already; the same invocation
 * runs it (calls one after another, never two at once), for up to PULL_FOR_MS. A `begin` that
 * lands meanwhile (the object lent to the next job) wins: the pulled task is dropped.
 *
 * Storage: `task` (the TaskRef) and `outcome` (the last attempt's, with its dispatch token). They
 * stay after the report; a task's outcome is the stored one only when the tokens match (`begin`
 * clears both). A pulled task is stored with its outcome, one commit per task: a restart during
 * its call finds the task before it, reports it again, and the coordinator answers that repeated
 * report with the slot's running task, so the call runs again as it would from a stored task.
 *
 * A stage's compiled template and schema are cached in memory per job, round and stage, from the
 * setup the coordinator sends with a task when the worker does not hold it (the endpoint resolved
 * once per job, not per worker).
 */
import { DurableObject } from "cloudflare:workers";
import { renderLimits } from "../src/config";
import { compileCall, runAttempt, type CompiledCall } from "../src/engine/attempt";
import { endpointData, endpointFrom } from "../src/llm/call-model";
import { withCallTimer } from "../src/llm/call-timer";
import { parseModel } from "../src/llm/models";
import type { AttemptOutcome } from "../src/engine/retry-policy";
import { setupKey, type CallSpec, type PulledTask, type PullRequest, type StageSetup, type StageWork, type TaskClaim, type TaskRef } from "../src/engine/types";
import type { ProviderEndpoint } from "../src/llm/types";
import { jobCoordinator } from "../src/objects";
import type { CacheScope } from "../src/cache/response-cache";

/**
 * Compiled stage calls shared by the call workers of this isolate (a job's C slots are C objects,
 * often in one isolate: one compile instead of C), by job and setup key, the newest COMPILED_KEPT.
 */
const COMPILED_KEPT = 32;
const compiledCalls = new Map<string, CompiledCall>();

function compiledFor(key: string, call: CallSpec, env: Env): CompiledCall {
  let compiled = compiledCalls.get(key);
  if (compiled) return compiled;
  compiled = compileCall(call, renderLimits(env));
  compiledCalls.set(key, compiled);
  if (compiledCalls.size > COMPILED_KEPT) compiledCalls.delete(compiledCalls.keys().next().value as string);
  return compiled;
}

/** How long one invocation goes on taking its next task from its report; then a fresh `begin` starts the next invocation. */
const PULL_FOR_MS = 60_000;

/** An attempt's outcome, kept until its report lands; it is the current task's only if the tokens match. */
type StoredOutcome = { token: string; outcome: AttemptOutcome };

function storedOutcome(ref: TaskRef, stored: StoredOutcome | AttemptOutcome | null | undefined): AttemptOutcome | undefined {
  if (!stored) return undefined;
  // Written by an earlier deploy, which cleared the outcome whenever it stored a task: the current
  // task's. The next task stored with its outcome replaces it.
  if ("kind" in stored) return stored;
  return stored.token === ref.token ? stored.outcome : undefined;
}

type Stage = { call: CallSpec; compiled: CompiledCall; endpoint: ProviderEndpoint | null; cache: CacheScope | null };

export class CallWorker extends DurableObject<Env> {
  #job: string | null = null; // the job whose stages are cached (keyed `<round>:<stage>`)
  #stages = new Map<string, Stage>();
  #begun = 0; // tasks handed to this object by `begin`: a loop that sees it change has lost its slot
  #unanswered = false; // the last claim or report threw: a task it was to hand over never came (no restart lost it)

  async begin(ref: TaskRef): Promise<void> {
    this.#begun++;
    // One commit: the output gate holds our answer until both writes are durable (a null outcome: none yet).
    void this.ctx.storage.put({ task: ref, outcome: null });
    void this.ctx.storage.setAlarm(Date.now());
  }

  /** The job is deleted: its task and outcome go, unless the object serves another job by now (a pool's worker). */
  async purge(jobId: string): Promise<void> {
    const task = await this.ctx.storage.get<TaskRef>("task");
    if (task?.jobId !== jobId) return;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#job = null;
    this.#stages.clear();
  }

  /** The slot's tasks, one after another, their calls' timeouts on one timer (src/llm/call-timer.ts). */
  override alarm(): Promise<void> {
    return withCallTimer(() => this.#run());
  }

  async #run(): Promise<void> {
    const begun = this.#begun;
    let ref = await this.ctx.storage.get<TaskRef>("task");
    if (!ref) return;
    let outcome = storedOutcome(ref, await this.ctx.storage.get<StoredOutcome | AttemptOutcome | null>("outcome"));
    let claim: TaskClaim | null = null;
    const started = Date.now();
    const coordinator = jobCoordinator(this.env, ref.jobId); // the pulled tasks are the same job's
    for (;;) {
      if (!outcome) {
        claim ??= await this.#claim(coordinator, ref);
        if (!claim) return; // a stale dispatch: the coordinator has moved on
        outcome = await this.#attempt(ref, claim);
        // The task with its outcome, one commit per task. Not waited for: the report need not sit
        // behind a disk sync. If the object dies before the write lands, the interrupted alarm
        // reports the task before it again, and its answer hands this one back (runs it again);
        // the coordinator keeps one result. A task begun here meanwhile stays the stored one.
        const kept: StoredOutcome = { token: ref.token, outcome };
        void this.ctx.storage.put(this.#begun === begun ? { task: ref, outcome: kept } : { outcome: kept }, { allowUnconfirmed: true });
      }
      const pull = Date.now() - started < PULL_FOR_MS;
      const have: PullRequest | null = pull
        ? { have: this.#job === ref.jobId ? [...this.#stages.keys()] : [], slot: ref.slot, round: ref.round, unanswered: this.#unanswered }
        : null;
      let next: PulledTask | null;
      try {
        next = (await coordinator.report({ stage: ref.stage, index: ref.index, token: ref.token }, outcome, have)) as PulledTask | null;
      } catch (err) {
        this.#unanswered = true;
        throw err;
      }
      this.#unanswered = false;
      if (!next) return;
      // Another task was begun here while this one was under way: the object now serves that task
      // (a pool's worker lent to the next job after this job ended). The pulled task is this job's,
      // which has ended since it was handed out: running it, then storing it with its outcome,
      // would put it over the newer one.
      if (this.#begun !== begun) return;
      // The next task is this slot's from now on. It is stored with its outcome, not before its
      // call: after a restart the stored task is the one before it, whose report is answered with
      // this one again (the coordinator knows what runs on the slot).
      ref = next.ref;
      claim = { ...next.claim, setup: next.setup };
      outcome = undefined;
    }
  }

  /** The task's inputs; a claim that throws leaves `#unanswered` set (its retry is no re-sent call). RPC types cannot express `unknown` values: it is a TaskClaim. */
  async #claim(coordinator: ReturnType<typeof jobCoordinator>, ref: TaskRef): Promise<TaskClaim | null> {
    try {
      const claim = (await coordinator.claim(ref.stage, ref.index, ref.token, !this.#holds(ref), this.#unanswered)) as TaskClaim | null;
      this.#unanswered = false;
      return claim;
    } catch (err) {
      this.#unanswered = true;
      throw err;
    }
  }

  #holds(ref: TaskRef): boolean {
    return this.#job === ref.jobId && this.#stages.has(setupKey(ref.round, ref.stage, ref.route, ref.tier, ref.deployment));
  }

  /** The stage's compiled call, from the cache, the setup that came with the task, or asked for. */
  async #stage(ref: TaskRef, setup: StageSetup | null | undefined): Promise<Stage | null> {
    if (this.#job !== ref.jobId) {
      this.#job = ref.jobId;
      this.#stages.clear();
    }
    const key = setupKey(ref.round, ref.stage, ref.route, ref.tier, ref.deployment); // each model of a fallback chain (each tier, each deployment of a pool) is a stage of its own here
    const cached = this.#stages.get(key);
    if (cached) return cached;
    const coordinator = jobCoordinator(this.env, ref.jobId);
    const work = setup ? setup.work : ((await coordinator.work(ref.stage, ref.route ?? 0)) as StageWork | null);
    if (!work || work.kind !== "call") return null;
    // A setup carries the credential's own endpoint; a pool's other deployments are read here, once per stage.
    const provider = parseModel(work.call.model).provider;
    const deployment = ref.deployment ?? 0;
    const endpoint = setup && deployment === 0 ? setup.endpoint : await endpointData(this.env, work.tenantId, provider, deployment);
    const ttlSecs = work.call.cacheTtlSecs ?? null;
    const stage: Stage = {
      call: work.call,
      compiled: compiledFor(`${ref.jobId}:${key}`, work.call, this.env),
      endpoint: endpointFrom(this.env, endpoint),
      cache: ttlSecs ? { db: this.env.DB, tenantId: work.tenantId, ttlSecs } : null,
    };
    this.#stages.set(key, stage);
    return stage;
  }

  async #attempt(ref: TaskRef, claim: TaskClaim): Promise<AttemptOutcome> {
    try {
      const stage = await this.#stage(ref, claim.setup);
      if (!stage) return { kind: "crash", error: "the task's stage has no model call", usage: { input_tokens: 0, output_tokens: 0 } };
      const outcome = await runAttempt(this.env, stage.call, stage.compiled, stage.endpoint, claim.vars, claim.problems, stage.cache);
      return ref.deployment ? { ...outcome, deployment: ref.deployment } : outcome; // the deployment answered: its circuit and pacer learn of it
    } catch (err) {
      console.error("attempt crashed", err);
      return { kind: "crash", error: "the attempt failed with an internal error", usage: { input_tokens: 0, output_tokens: 0 } };
    }
  }
}
