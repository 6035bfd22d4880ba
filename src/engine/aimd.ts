/**
 * Adaptive concurrency for one (tenant, model): additive increase, multiplicative decrease, as
 * TCP does for a congested link. Pure, so the policy is tested on its own; the state lives in
 * the ProviderLimiter object of that tenant and model.
 * - A throttle (429, 529, 503 with Retry-After) opens a window: the limit is cut to CUT_FACTOR of
 *   the calls in flight when it came (never below 1). A throttled call sent before that cut
 *   belongs to the same window (it was sent under the old limit): it cuts no further by itself,
 *   but the limit never stays above the calls of the window that got through (sent − throttled),
 *   so a burst far over the provider's room settles at that room in one window.
 * - Successes grow it back by one per `limit` successes (about one per round of calls); at the
 *   level where the last window opened (the provider's room, as last seen), by one per
 *   PROBE_ROUNDS rounds: it probes for more room now and then instead of every round.
 * - Once it reaches the ceiling (the concurrency the jobs asked for), it is lifted: `null`.
 */
export const CUT_FACTOR = 0.8;
export const PROBE_ROUNDS = 8;

export interface Aimd {
  limit: number | null; // calls in flight allowed; null: no limit but the jobs' own
  credit: number; // successes counted towards the next increase
  cutAt: number; // when the window opened (ms)
  sent?: number; // the calls in flight when the window opened
  throttled?: number; // the window's throttled calls so far
}

export const OPEN: Aimd = { limit: null, credit: 0, cutAt: 0 };

/** A throttle of a call sent at `sentAt`, while `inFlight` calls were out (all jobs of the tenant and model). */
export function cut(state: Aimd, inFlight: number, now: number, sentAt: number): Aimd {
  if (state.limit !== null && sentAt <= state.cutAt) {
    const throttled = (state.throttled ?? 1) + 1;
    const through = (state.sent ?? state.limit) - throttled;
    return { ...state, limit: Math.max(1, Math.min(state.limit, through)), throttled };
  }
  const sent = Math.min(state.limit ?? Infinity, Math.max(1, inFlight));
  return { limit: Math.max(1, Math.floor(sent * CUT_FACTOR)), credit: 0, cutAt: now, sent, throttled: 1 };
}

/** `count` successes; `ceiling` is the concurrency the active jobs asked for in all. */
export function grow(state: Aimd, count: number, ceiling: number): Aimd {
  if (state.limit === null) return state;
  let { limit, credit } = state;
  const knee = state.sent === undefined ? Infinity : state.sent - 1; // the most that got through when it was last throttled
  const roundsPerStep = () => (limit >= knee ? PROBE_ROUNDS : 1);
  credit += count;
  while (credit >= limit * roundsPerStep()) {
    credit -= limit * roundsPerStep();
    limit += 1;
  }
  return limit >= ceiling ? { ...OPEN } : { ...state, limit, credit };
}

/** One job's share of the limit: an equal split among the active jobs, at least 1, at most what it asked. */
export function share(state: Aimd, jobs: number, concurrency: number): number {
  if (state.limit === null) return concurrency;
  return Math.min(concurrency, Math.max(1, Math.floor(state.limit / Math.max(1, jobs))));
}
