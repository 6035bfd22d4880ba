/**
 * A job's call workers: the block of objects its tenant's WorkerPool lends it for a round
 * (src/engine/worker-blocks.ts), kept in the coordinator's meta (`workers`) so a restart
 * dispatches to the same objects. Without a block (the pool could not be reached, a job stored
 * before pools, or an agentic job, whose items run in sub-sessions) its workers are objects of
 * its own (`<job id>:<slot>`), as they always were. Every block a job used is remembered
 * (`workers_used`): a delete wipes what the job left in them.
 */
import { operatorFor } from "../../src/operators/registry";
import type { JobSpecBase as JobSpec } from "../../src/engine/types";
import { workerName, type Block } from "../../src/engine/worker-blocks";
import { callWorker, workerPool } from "../../src/objects";
import type { CoordinatorStore } from "./store";

export class WorkerLink {
  #block: Block | null;

  constructor(
    private readonly env: Env,
    private readonly store: CoordinatorStore,
  ) {
    this.#block = store.getMeta("workers") ?? null;
  }

  /** Borrows the job's block for round `round`; on failure the job runs on objects of its own. None for an operator of sessions only. */
  async lease(spec: JobSpec, round: number): Promise<void> {
    if (operatorFor(spec).callWorkers === false) return;
    let block: Block | null = null;
    try {
      block = await workerPool(this.env, spec.tenantId).lease(spec.jobId, spec.concurrency, round);
    } catch (err) {
      console.error("the worker pool could not be reached; the job runs on workers of its own", err);
    }
    this.#block = block;
    const used = this.store.getMeta("workers_used") ?? [];
    if (!used.some((b) => b?.start === block?.start && b?.count === block?.count)) used.push(block);
    this.store.transaction(() => {
      this.store.setMeta("workers", block);
      this.store.setMeta("workers_used", used);
    });
  }

  /** The round ended: the block goes back to the pool (a later round borrows again). */
  async release(spec: JobSpec, round: number): Promise<void> {
    if (this.#block === null) return;
    await workerPool(this.env, spec.tenantId)
      .release(spec.jobId, round)
      .catch((err: unknown) => console.error("could not give the workers back; the pool checks on the job later", err));
  }

  /** The object that runs slot `slot`. */
  worker(spec: JobSpec, slot: number) {
    return callWorker(this.env, workerName(spec, this.#block, slot));
  }

  /** Every object the job may have left a task in, over its rounds. */
  names(spec: JobSpec): string[] {
    const used = this.store.getMeta("workers_used") ?? [null];
    return [...new Set(used.flatMap((block) => Array.from({ length: block?.count ?? spec.concurrency }, (_, slot) => workerName(spec, block, slot))))];
  }
}
