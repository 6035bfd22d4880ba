/**
 * Adaptive concurrency for one (credential, model): additive increase, multiplicative decrease, as
 * TCP does for a congested link. Pure, so the policy is tested on its own; the state lives in
 * the ProviderLimiter object of that credential and model.
 * - A throttle (429, 529, 503 with Retry-After) opens a window: the limit is cut to CUT_FACTOR of
 *   the calls in flight when it came (never below 1). A throttled call sent before that cut
 *   belongs to the same window (it was sent under the old limit): it cuts no further by itself,
 *   but the limit never stays above the calls of the window that got through (sent − throttled),
 *   so a burst far over the provider's room settles at that room in one window.
 * - Successes grow it back by one per `limit` successes (about one per round of calls); at the
 *   level where the last window opened (the provider's room, as last seen), by one per
 *   PROBE_ROUNDS rounds: it probes for more room now and then instead of every round. A probe
 *   that goes through shows more room: past that level it grows by one per success.
 * - Once it reaches the ceiling (the concurrency the jobs asked for), it is lifted: `null`.
 * - Throttles that come whatever the load (a provider that answers a share of calls 429 at any
 *   concurrency) would shrink the limit round after round for nothing, as random loss does to
 *   TCP. So a cut is checked: when the window after a cut is throttled at half the share of the
 *   one before it or more (and at SPORADIC_SHARE or more), the cuts undo and that share is
 *   tolerated: later windows cut only once more than twice it of their calls are throttled.
 * - A first round is paced: a job that asks for more than INITIAL_WINDOW calls on a model the
 *   limiter knows nothing of (new, or unused for a while) starts at INITIAL_WINDOW; RAMP_MS later,
 *   if no throttle came (a 429 comes back fast), the limit is lifted. A provider with less room
 *   then throttles a round of INITIAL_WINDOW calls, not the job's whole first round.
 */
export const CUT_FACTOR = 0.8;
export const PROBE_ROUNDS = 8;
export const SPORADIC_SHARE = 0.05;
export const INITIAL_WINDOW = 16;
export const RAMP_MS = 250;

export interface Aimd {
  limit: number | null; // calls in flight allowed; null: no limit but the jobs' own
  credit: number; // successes counted towards the next increase
  cutAt: number; // when the window opened (ms)
  sent?: number; // the calls in flight when the window opened
  throttled?: number; // the window's throttled calls so far
  ok?: number; // successes reported since the window opened (while a limit holds)
  held?: boolean; // false: the window has not cut (its share is tolerated so far)
  before?: number | null; // the limit before the cuts in a row that the latest window belongs to
  lastShare?: number; // the throttled share of the window before this one
  tolerate?: number; // a throttled share that comes whatever the load
  rampUntil?: number; // a paced first round: lifted at this time (ms) unless a throttle came first
}

export const OPEN: Aimd = { limit: null, credit: 0, cutAt: 0 };

/** No limit any more; a share of throttles that comes whatever the load stays tolerated. */
function lifted(state: Aimd): Aimd {
  return state.tolerate ? { ...OPEN, tolerate: state.tolerate } : { ...OPEN };
}

/** Whether `throttled` of a window's `sent` calls are more than sporadic throttles would be. */
function overTolerance(throttled: number, sent: number, tolerate: number): boolean {
  return tolerate === 0 || (throttled >= 2 && throttled / sent > 2 * tolerate);
}

/** A throttle of a call sent at `sentAt`, while `inFlight` calls were out (all jobs of the credential and model). */
export function cut(state: Aimd, inFlight: number, now: number, sentAt: number): Aimd {
  const tolerate = state.tolerate ?? 0;
  if (state.sent !== undefined && sentAt <= state.cutAt) {
    const throttled = (state.throttled ?? 1) + 1;
    const through = state.sent - throttled;
    if (state.held !== false) return { ...state, limit: Math.max(1, Math.min(state.limit ?? Infinity, through)), throttled };
    if (!overTolerance(throttled, state.sent, tolerate)) return { ...state, throttled };
    const limit = Math.max(1, Math.min(Math.floor(state.sent * CUT_FACTOR), through));
    return { ...state, limit, throttled, held: true, before: state.limit };
  }
  let limit = state.limit;
  let tolerated = tolerate;
  const before = state.held === false || state.sent === undefined ? state.limit : (state.before ?? null);
  const share = state.sent === undefined ? undefined : (state.throttled ?? 1) / ((state.throttled ?? 1) + (state.ok ?? 0));
  if (state.held !== false && state.lastShare !== undefined && share !== undefined && share >= SPORADIC_SHARE && share >= state.lastShare / 2) {
    // The last cut left the share of throttled calls where it was: they do not come from the load.
    tolerated = Math.max(tolerate, share);
    limit = before; // and the next cuts in a row start from it again
  }
  const sent = Math.min(limit ?? Infinity, Math.max(1, inFlight));
  const lastShare = state.held === false ? undefined : share; // a window that did not cut says nothing of a cut
  const window = { credit: 0, cutAt: now, sent, throttled: 1, ok: 0, lastShare, ...(tolerated > 0 ? { tolerate: tolerated } : {}) };
  if (!overTolerance(1, sent, tolerated)) return { ...window, limit, held: false, before: limit };
  return { ...window, limit: Math.max(1, Math.floor(sent * CUT_FACTOR)), held: true, before };
}

/** `count` successes; `ceiling` is the concurrency the active jobs asked for in all. */
export function grow(state: Aimd, count: number, ceiling: number): Aimd {
  if (state.limit === null) return state;
  let { limit, credit } = state;
  const knee = state.sent === undefined ? Infinity : state.sent - 1; // the most that got through when it was last throttled
  // Below the knee one step per round; at it, one per PROBE_ROUNDS rounds; past it (a probe went
  // through: the room grew, or the limit was learned under smaller jobs) one per success, doubling
  // per round as TCP's slow start does, until a throttle opens a window again or the ceiling lifts it.
  const cost = () => (limit < knee ? limit : limit === knee ? limit * PROBE_ROUNDS : 1);
  credit += count;
  while (credit >= cost()) {
    credit -= cost();
    limit += 1;
  }
  const ok = (state.ok ?? 0) + count;
  if (limit < ceiling) return { ...state, limit, credit, ...(state.sent === undefined ? {} : { ok }) };
  return lifted(state);
}

/** A job's share of the limit when it holds `part` of it (never below one call, never above its own concurrency). */
export function shareOf(state: Aimd, part: number, concurrency: number): number {
  if (state.limit === null) return concurrency;
  return Math.min(concurrency, Math.max(1, Math.floor(state.limit * part + 1e-9)));
}

/** The part of the limit a job of `tenant` holds among `active` jobs: equal per tenant, then per job of the tenant (contract v3, fairness). */
export function tenantPart(active: { tenant: string }[], tenant: string): number {
  const tenants = new Set(active.map((j) => j.tenant));
  const mine = active.filter((j) => j.tenant === tenant).length;
  return 1 / Math.max(1, tenants.size) / Math.max(1, mine);
}

/** Successes the jobs counted since they last said so, for the window's throttled share (a throttle's report carries them). */
export function succeeded(state: Aimd, count: number): Aimd {
  return count > 0 && state.sent !== undefined ? { ...state, ok: (state.ok ?? 0) + count } : state;
}

/** A job asking for `concurrency` joins a limiter that knows nothing of the provider: its first round is paced. */
export function paced(state: Aimd, concurrency: number, now: number): Aimd {
  if (state.limit !== null || concurrency <= INITIAL_WINDOW) return state;
  return { ...state, limit: INITIAL_WINDOW, cutAt: now, rampUntil: now + RAMP_MS };
}

/** A paced first round that no throttle cut by `rampUntil` is lifted (a cut opens a window, which ends the pacing). */
export function ramped(state: Aimd, now: number): Aimd {
  if (state.rampUntil === undefined || state.sent !== undefined || now < state.rampUntil) return state;
  return lifted(state);
}
