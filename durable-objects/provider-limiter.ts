/**
 * ProviderLimiter: one per (credential, model), named `<credential id>:<model>` (the tenant's own
 * provider key, or the deployment's: shared by every tenant without one, as the RatePacer is; a
 * job whose credential could not be read uses `tenant:<tenant id>`). It holds the number of
 * calls the jobs on that key may have in flight on that model (src/engine/aimd.ts: cut on a
 * throttle, grown back by successes, lifted at the jobs' own concurrency) and splits it equally
 * among the tenants using it, then among each tenant's jobs (contract v3, fairness). Jobs talk to it when they start, when the provider throttles one of
 * their calls, and, while a limit holds, once per round of successes; a job that was never
 * throttled and starts while no limit holds pays one call at its start and nothing after. A
 * job that joins when the model has not been used for FORGET_MS starts paced (aimd.ts); it asks
 * again once the pacing may end.
 * Its state is in its storage: a restart keeps the limit and the jobs.
 */
import { DurableObject } from "cloudflare:workers";
import { cut, grow, OPEN, paced, ramped, shareOf, succeeded, tenantPart, type Aimd } from "../src/engine/aimd";

/** A job that has not been heard from for this long no longer takes a share. */
const ACTIVE_MS = 60_000;
/** A limit learned this long ago, with no other job using it, is forgotten: the provider may have more room now. A model unused this long is paced again. */
const FORGET_MS = 10 * 60_000;

interface JobEntry {
  concurrency: number;
  inFlight: number;
  seen: number;
  /** The job's tenant: shares are equal per tenant, then per job of a tenant (an entry stored before tenants were kept is its own). */
  tenant?: string;
}

/** Who asks: a job and its tenant (a bare job id: a tenant of its own). */
export type LimiterJob = string | { id: string; tenant: string };
const whoIs = (job: LimiterJob) => (typeof job === "string" ? { id: job, tenant: job } : job);

export class ProviderLimiter extends DurableObject<Env> {
  #state: Aimd | null = null;
  #jobs: Record<string, JobEntry> | null = null;
  #seen: number | null = null; // the last call from any job (0: none on record)

  async #load(): Promise<{ state: Aimd; jobs: Record<string, JobEntry>; seen: number }> {
    this.#state ??= (await this.ctx.storage.get<Aimd>("aimd")) ?? { ...OPEN };
    this.#jobs ??= (await this.ctx.storage.get<Record<string, JobEntry>>("jobs")) ?? {};
    this.#seen ??= (await this.ctx.storage.get<number>("seen")) ?? 0;
    return { state: this.#state, jobs: this.#jobs, seen: this.#seen };
  }

  #active(now: number): (JobEntry & { tenant: string })[] {
    const jobs = this.#jobs ?? {};
    for (const [id, job] of Object.entries(jobs)) if (now - job.seen > ACTIVE_MS) delete jobs[id];
    return Object.entries(jobs).map(([id, job]) => ({ ...job, tenant: job.tenant ?? id }));
  }

  async #answer(job: LimiterJob, concurrency: number, inFlight: number, next: (state: Aimd, active: JobEntry[], unused: boolean) => Aimd): Promise<number> {
    const now = Date.now();
    const { state, jobs, seen } = await this.#load();
    const { id: jobId, tenant } = whoIs(job);
    jobs[jobId] = { concurrency, inFlight, seen: now, tenant };
    const active = this.#active(now);
    const stale = state.limit !== null && active.length === 1 && now - state.cutAt > FORGET_MS;
    const unused = active.length === 1 && now - seen > FORGET_MS;
    this.#state = next(ramped(stale ? { ...OPEN } : state, now), active, unused);
    this.#seen = now;
    void this.ctx.storage.put({ aimd: this.#state, jobs, seen: now });
    return shareOf(this.#state, tenantPart(active, tenant), concurrency);
  }

  /** A job starts (or reloads, or asks again once a paced first round may end): its share now. */
  join(job: LimiterJob, concurrency: number, inFlight: number): Promise<number> {
    return this.#answer(job, concurrency, inFlight, (state, _active, unused) => (unused ? paced(state, concurrency, Date.now()) : state));
  }

  /** The provider throttled one of the job's calls, sent at `sentAt`, while it had `inFlight` out (and `ok` calls succeeded since it last said). */
  throttled(job: LimiterJob, concurrency: number, inFlight: number, sentAt: number, ok = 0): Promise<number> {
    return this.#answer(job, concurrency, inFlight, (state, active) =>
      cut(
        succeeded(state, ok),
        active.reduce((n, j) => n + j.inFlight, 0),
        Date.now(),
        sentAt,
      ),
    );
  }

  /** `count` of the job's calls succeeded since it last said so. */
  succeeded(job: LimiterJob, concurrency: number, inFlight: number, count: number): Promise<number> {
    return this.#answer(job, concurrency, inFlight, (state, active) =>
      grow(
        state,
        count,
        active.reduce((n, j) => n + j.concurrency, 0),
      ),
    );
  }

  /** The job ended: it no longer takes a share. */
  async leave(jobId: string): Promise<void> {
    const { jobs } = await this.#load();
    if (!(jobId in jobs)) return;
    delete jobs[jobId];
    await this.ctx.storage.put("jobs", jobs);
  }

  /** The limit and the active jobs (the integration tests read it). */
  async snapshot(): Promise<{ limit: number | null; jobs: string[] }> {
    const { state } = await this.#load();
    this.#active(Date.now());
    return { limit: state.limit, jobs: Object.keys(this.#jobs ?? {}) };
  }
}
