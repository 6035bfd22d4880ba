/**
 * MapWorker: one slot of a job's worker pool. A job with concurrency C has C slots
 * (`<job_id>:<slot>`), each running one attempt of one item at a time in its own invocation,
 * so no invocation holds more than one outgoing model connection.
 *
 * Lifecycle of an attempt: `begin(task)` stores the task and sets an alarm for now, then returns
 * (the coordinator never waits on a model call). The alarm runs the attempt, stores the outcome,
 * then reports it to the coordinator. If the report fails the alarm throws and the platform
 * retries it; the stored outcome is reported again without a second model call.
 *
 * Storage: `task` (the AttemptTask), `outcome` (once known). They stay after the report (no
 * extra write per item) and are replaced by the next `begin`; the alarm that ran them is spent.
 */
import { DurableObject } from "cloudflare:workers";
import { renderLimits } from "../src/config";
import { compileJob, runAttempt, type CompiledJob } from "../src/jobs/attempt";
import { resolveEndpoint } from "../src/llm/call-model";
import { parseModel } from "../src/llm/models";
import type { AttemptOutcome } from "../src/jobs/retry-policy";
import type { AttemptTask, MapTask } from "../src/jobs/spec";
import type { ProviderEndpoint } from "../src/llm/types";

export class MapWorker extends DurableObject<Env> {
  #compiled: { jobId: string; job: CompiledJob; endpoint: ProviderEndpoint | null } | null = null;

  async begin(task: AttemptTask): Promise<void> {
    // One commit: the output gate holds our answer until all three writes are durable.
    void this.ctx.storage.delete("outcome");
    void this.ctx.storage.put("task", task);
    void this.ctx.storage.setAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    const task = await this.ctx.storage.get<AttemptTask>("task");
    if (!task || task.spec.type !== "map") return;
    let outcome = await this.ctx.storage.get<AttemptOutcome>("outcome");
    if (!outcome) {
      outcome = await this.#attempt(task as MapTask);
      // Not waited for: the report need not sit behind a disk sync. If the object dies before the
      // write lands, the interrupted alarm runs the attempt again; the coordinator keeps one result.
      void this.ctx.storage.put("outcome", outcome, { allowUnconfirmed: true });
    }
    const coordinator = this.env.JOB_COORDINATOR.get(this.env.JOB_COORDINATOR.idFromName(task.spec.jobId));
    await coordinator.report(task.index, task.token, outcome);
  }

  async #attempt(task: MapTask): Promise<AttemptOutcome> {
    try {
      if (this.#compiled?.jobId !== task.spec.jobId) {
        const provider = parseModel(task.spec.model).provider;
        this.#compiled = {
          jobId: task.spec.jobId,
          job: compileJob(task.spec, renderLimits(this.env)),
          endpoint: await resolveEndpoint(this.env, task.spec.tenantId, provider),
        };
      }
      return await runAttempt(this.env, task, this.#compiled.job, this.#compiled.endpoint);
    } catch (err) {
      console.error("map attempt crashed", err);
      const usage = { input_tokens: 0, output_tokens: 0 };
      return { kind: "crash", error: "the attempt failed with an internal error", usage };
    }
  }
}
