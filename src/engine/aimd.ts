/**
 * Adaptive concurrency for one (tenant, model): additive increase, multiplicative decrease, as
 * TCP does for a congested link. Pure, so the policy is tested on its own; the state lives in
 * the ProviderLimiter object of that tenant and model.
 * - A throttle (429, 529, 503 with Retry-After) cuts the limit to CUT_FACTOR of the calls in
 *   flight when it came (never below 1) — once per window: a throttled call sent before the last
 *   cut was sent under the old limit, and says nothing new (TCP's rule for one loss per window).
 * - Successes grow it back by one per `limit` successes (about one per round of calls).
 * - Once it reaches the ceiling (the concurrency the jobs asked for), it is lifted: `null`.
 */
export const CUT_FACTOR = 0.7;

export interface Aimd {
  limit: number | null; // calls in flight allowed; null: no limit but the jobs' own
  credit: number; // successes counted towards the next increase
  cutAt: number; // when the limit was last cut (ms)
}

export const OPEN: Aimd = { limit: null, credit: 0, cutAt: 0 };

/** A throttle of a call sent at `sentAt`, while `inFlight` calls were out (all jobs of the tenant and model). */
export function cut(state: Aimd, inFlight: number, now: number, sentAt: number): Aimd {
  if (state.limit !== null && sentAt <= state.cutAt) return state;
  const base = Math.min(state.limit ?? Infinity, Math.max(1, inFlight));
  return { limit: Math.max(1, Math.floor(base * CUT_FACTOR)), credit: 0, cutAt: now };
}

/** `count` successes; `ceiling` is the concurrency the active jobs asked for in all. */
export function grow(state: Aimd, count: number, ceiling: number): Aimd {
  if (state.limit === null) return state;
  let { limit, credit } = state;
  credit += count;
  while (credit >= limit) {
    credit -= limit;
    limit += 1;
  }
  return limit >= ceiling ? { ...OPEN } : { limit, credit, cutAt: state.cutAt };
}

/** One job's share of the limit: an equal split among the active jobs, at least 1, at most what it asked. */
export function share(state: Aimd, jobs: number, concurrency: number): number {
  if (state.limit === null) return concurrency;
  return Math.min(concurrency, Math.max(1, Math.floor(state.limit / Math.max(1, jobs))));
}
