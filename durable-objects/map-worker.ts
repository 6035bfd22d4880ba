/**
 * MapWorker: one slot of a job's worker pool for call stages (any operator). A job with
 * concurrency C has C slots (`<job_id>:<slot>`), each running one attempt of one task at a time in
 * its own invocation, so no invocation holds more than one outgoing model connection.
 *
 * Lifecycle of an attempt: `begin(ref)` stores the task reference and sets an alarm for now, then
 * returns (the coordinator never waits on a model call). The alarm claims the task's inputs from
 * the coordinator (a stale dispatch gets nothing and does no work), runs the attempt, stores the
 * outcome, then reports it. If the report fails the alarm throws and the platform retries it; the
 * stored outcome is reported again without a second model call.
 *
 * Storage: `task` (the TaskRef), `outcome` (once known). They stay after the report (no extra
 * write per task) and are replaced by the next `begin`. A stage's compiled template and schema
 * are cached in memory, fetched once per job and stage.
 */
import { DurableObject } from "cloudflare:workers";
import { renderLimits } from "../src/config";
import { compileCall, runAttempt, type CompiledCall } from "../src/engine/attempt";
import { resolveEndpoint } from "../src/llm/call-model";
import { parseModel } from "../src/llm/models";
import type { AttemptOutcome } from "../src/engine/retry-policy";
import type { CallSpec, StageWork, TaskClaim, TaskRef } from "../src/engine/types";
import type { ProviderEndpoint } from "../src/llm/types";
import { jobCoordinator } from "../src/objects";

type Stage = { call: CallSpec; compiled: CompiledCall; endpoint: ProviderEndpoint | null };

export class MapWorker extends DurableObject<Env> {
  #round: string | null = null; // `<job id>:<round>` of the cached stages
  #stages = new Map<string, Stage>();

  async begin(ref: TaskRef): Promise<void> {
    // One commit: the output gate holds our answer until all three writes are durable.
    void this.ctx.storage.delete("outcome");
    void this.ctx.storage.put("task", ref);
    void this.ctx.storage.setAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    const ref = await this.ctx.storage.get<TaskRef>("task");
    if (!ref) return;
    const coordinator = jobCoordinator(this.env, ref.jobId);
    let outcome = await this.ctx.storage.get<AttemptOutcome>("outcome");
    if (!outcome) {
      // RPC types cannot express `unknown` values; the coordinator returns a TaskClaim.
      const claim = (await coordinator.claim(ref.stage, ref.index, ref.token)) as TaskClaim | null;
      if (!claim) return; // a stale dispatch: the coordinator has moved on
      outcome = await this.#attempt(ref, claim.vars, claim.problems);
      // Not waited for: the report need not sit behind a disk sync. If the object dies before the
      // write lands, the interrupted alarm runs the attempt again; the coordinator keeps one result.
      void this.ctx.storage.put("outcome", outcome, { allowUnconfirmed: true });
    }
    await coordinator.report({ stage: ref.stage, index: ref.index, token: ref.token }, outcome);
  }

  async #stage(ref: TaskRef): Promise<Stage | null> {
    if (this.#round !== `${ref.jobId}:${ref.round}`) {
      this.#round = `${ref.jobId}:${ref.round}`;
      this.#stages.clear();
    }
    const cached = this.#stages.get(ref.stage);
    if (cached) return cached;
    const work = (await jobCoordinator(this.env, ref.jobId).work(ref.stage)) as StageWork | null;
    if (!work || work.kind !== "call") return null;
    const stage: Stage = {
      call: work.call,
      compiled: compileCall(work.call, renderLimits(this.env)),
      endpoint: await resolveEndpoint(this.env, work.tenantId, parseModel(work.call.model).provider),
    };
    this.#stages.set(ref.stage, stage);
    return stage;
  }

  async #attempt(ref: TaskRef, vars: Record<string, unknown>, problems: string[] | null): Promise<AttemptOutcome> {
    try {
      const stage = await this.#stage(ref);
      if (!stage) return { kind: "crash", error: "the task's stage has no model call", usage: { input_tokens: 0, output_tokens: 0 } };
      return await runAttempt(this.env, stage.call, stage.compiled, stage.endpoint, vars, problems);
    } catch (err) {
      console.error("attempt crashed", err);
      return { kind: "crash", error: "the attempt failed with an internal error", usage: { input_tokens: 0, output_tokens: 0 } };
    }
  }
}
