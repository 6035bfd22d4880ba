/**
 * WorkerPool: one per tenant, named by the tenant id. It lends each of the tenant's running jobs a
 * block of call-worker objects (src/engine/worker-blocks.ts) and takes it back when the job ends,
 * so a job starts on warm objects: creating an object and its storage is most of what separates a
 * job's POST from its first model call (BENCHMARKS.md, "Warm call workers").
 *
 * A block is held until its job releases it (the end, a delete). A job that never does (an
 * object lost mid-release) would only keep its block from being reused: a lease older than
 * CHECK_AFTER_MS is checked with its coordinator, at most once per CHECK_AFTER_MS, and dropped
 * if the job no longer runs. Leases are in storage: a restart keeps them.
 */
import { DurableObject } from "cloudflare:workers";
import { firstFit, type Block } from "../src/engine/worker-blocks";
import { jobCoordinator } from "../src/objects";

const CHECK_AFTER_MS = 10 * 60_000;

interface Lease extends Block {
  round: number; // the job's round (a recover is a new one): a late release of an earlier round frees nothing
  checked: number; // when the job was last known to run
}

export class WorkerPool extends DurableObject<Env> {
  #leases: Record<string, Lease> | null = null;

  async #load(): Promise<Record<string, Lease>> {
    this.#leases ??= (await this.ctx.storage.get<Record<string, Lease>>("leases")) ?? {};
    return this.#leases;
  }

  /** The job's block of `count` objects for its round `round` (the one it holds, if big enough). */
  async lease(jobId: string, count: number, round: number): Promise<Block> {
    const leases = await this.#load();
    const held = leases[jobId];
    if (held && held.count >= count) {
      held.round = Math.max(held.round, round);
      await this.ctx.storage.put("leases", leases);
      return { start: held.start, count: held.count };
    }
    delete leases[jobId];
    await this.#dropEnded(leases);
    const start = firstFit(Object.values(leases), count);
    leases[jobId] = { start, count, round, checked: Date.now() };
    await this.ctx.storage.put("leases", leases);
    return { start, count };
  }

  /** The job's round `round` ended (or the job is deleted: any round): its block is free. */
  async release(jobId: string, round: number): Promise<void> {
    const leases = await this.#load();
    const held = leases[jobId];
    if (!held || held.round > round) return;
    delete leases[jobId];
    await this.ctx.storage.put("leases", leases);
  }

  /** The leases (the integration tests read them). */
  async snapshot(): Promise<Record<string, Block>> {
    const leases = await this.#load();
    return Object.fromEntries(Object.entries(leases).map(([id, l]) => [id, { start: l.start, count: l.count }]));
  }

  /** Leases not confirmed for a while are asked about; those of jobs that no longer run go. */
  async #dropEnded(leases: Record<string, Lease>): Promise<void> {
    const now = Date.now();
    const due = Object.keys(leases).filter((id) => now - (leases[id] as Lease).checked > CHECK_AFTER_MS);
    await Promise.all(
      due.map(async (id) => {
        const running = await jobCoordinator(this.env, id)
          .holdsWorkers()
          .catch(() => true); // unsure: keep it
        if (running) (leases[id] as Lease).checked = now;
        else delete leases[id];
      }),
    );
  }
}
