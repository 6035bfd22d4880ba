/**
 * Pacing by a provider's rate limits, for one (credential, model): pure, so the policy is tested
 * on its own; the state lives in the RatePacer object of that credential and model.
 * - Limits: the tenant's declaration (`rate_limits` on its provider credential) or the provider's
 *   headers (the declaration wins; the headers' `remaining` still corrects the view). Each limit
 *   is a bucket of half a second's worth (./rate-window.ts): requests, and tokens the way the
 *   provider counts them — OpenAI `tokens` (prompt + max_tokens, charged at the request);
 *   Anthropic `input` (charged at the request) and `output` (charged as produced: reserved at its
 *   bound, the rest given back when the call reports).
 * - A `retry-after` blocks every lease until it has passed, for at most MAX_SHARED_BLOCK_MS: the
 *   pacer is shared by every tenant on the credential, and one answer (a spent quota's days-long
 *   retry-after, a tenant's own server) must not stop the others' calls for longer. A state stored
 *   with a longer block is cut back to it when loaded (`bounded`).
 * - `heard`: a call on the credential and model was answered. Until then a job sends one call
 *   first (durable-objects/coordinator/pacing.ts) and waits for its headers.
 * - Leases: a job asks for up to `calls` calls of a cost and gets as many as fit now, or a wait
 *   after which about LEASE_MS of the limit will have refilled: a job asks a few times a second,
 *   not once per call, and the bucket (half a second) refills while an ask is under way, so its
 *   time is not lost to the rate. Nothing is granted ahead of the bucket: the calls a lease
 *   grants in any window W are at most the bucket plus PACE × the limit × W, so against a
 *   provider that allows a second's burst, calls may reach it up to ~0.5 s late relative to one
 *   another (a busy runtime's jitter) before one meets a 429.
 * - Fairness: while other jobs are short of what they asked (hungry), a job gets at most its share
 *   of each FAIR_WINDOW_MS — equal per tenant, then per job of the tenant — measured in tokens
 *   when a token limit is known, else in requests. A job that does not ask takes no share: what it
 *   leaves is lent to the others at once.
 */
import { bucket, correct, fits, giveBack, refill, relimit, take, waitFor, type Bucket } from "./rate-window";

export const LEASE_MS = 200;
export const FAIR_WINDOW_MS = 1_000;
/** The longest a provider's `retry-after` blocks the calls of every job on the pacer: the job that met it waits its own retry-after (up to its max wait) in its task's retry. */
export const MAX_SHARED_BLOCK_MS = 10_000;
/** A job not heard from for this long takes no share. */
export const ACTIVE_MS = 3_000;

export interface RateLimit {
  rpm: number | null;
  tpm: number | null;
}

/** A limit as a request gives it (either side may be absent) in the pacer's terms. */
export const rateLimitOf = (limit: { rpm?: number | null; tpm?: number | null }): RateLimit => ({ rpm: limit.rpm ?? null, tpm: limit.tpm ?? null });

/** One window as a provider's headers describe it. */
export interface ObservedWindow {
  limit: number | null;
  remaining: number | null;
}

/** What one answer's headers said (src/llm/rate-headers.ts). */
export interface RateObservation {
  requests?: ObservedWindow;
  tokens?: ObservedWindow;
  input?: ObservedWindow;
  output?: ObservedWindow;
  retryAfterMs?: number;
  /** When the answer came (ms): what was leased after it is not in its `remaining` yet. */
  at?: number;
}

export type Dimension = "requests" | "tokens" | "input" | "output";
const DIMENSIONS: Dimension[] = ["requests", "tokens", "input", "output"];

/** What one call takes of each limit: a request, its tokens (prompt + output bound), its input and its output bound. */
export interface CallCost {
  tokens: number;
  input: number;
  output: number;
}

export type LimitSource = "declared" | "headers";

interface JobUse {
  tenant: string;
  seen: number;
  hungry: boolean; // its last lease gave it less than it asked
  used: number; // units leased in the current fair window
  since: number; // the start of its fair window
}

/** Units leased at a time, kept for GRANTS_KEPT_MS: an answer's `remaining` does not count the ones leased after it. */
interface Grant {
  at: number;
  units: Partial<Record<Dimension, number>>;
}

const GRANTS_KEPT_MS = 10_000;

export interface PacerState {
  buckets: Partial<Record<Dimension, Bucket>>;
  source: LimitSource | null;
  blockedUntil: number;
  jobs: Record<string, JobUse>;
  grants?: Grant[];
  /** A call on this credential and model has been answered: a job starting on it need not probe first. */
  heard?: boolean;
}

export const EMPTY: PacerState = { buckets: {}, source: null, blockedUntil: 0, jobs: {}, grants: [] };

export interface LeaseAsk {
  jobId: string;
  tenant: string;
  calls: number;
  cost: CallCost;
}

export interface Lease {
  granted: number;
  /** When nothing (or not all) was granted: ask again after this long. */
  waitMs: number;
  /** The job's share of the limit while it shares it (1: alone). */
  share: number;
}

const costOf = (d: Dimension, cost: CallCost): number => (d === "requests" ? 1 : cost[d]);

/** Every bucket refilled to `now`. */
function refilled(buckets: PacerState["buckets"], now: number): Partial<Record<Dimension, Bucket>> {
  const out: Partial<Record<Dimension, Bucket>> = {};
  for (const d of DIMENSIONS) {
    const b = buckets[d];
    if (b) out[d] = refill(b, now);
  }
  return out;
}

function setLimit(state: PacerState, d: Dimension, perMinute: number | null | undefined, now: number): PacerState {
  if (!perMinute || perMinute <= 0 || !Number.isFinite(perMinute)) return state;
  const old = state.buckets[d];
  return { ...state, buckets: { ...state.buckets, [d]: old ? relimit(old, perMinute) : bucket(perMinute, now) } };
}

/** The tenant's declared limits for this model (null: none; the headers decide again). */
export function declare(state: PacerState, limits: RateLimit | null, now: number): PacerState {
  if (!limits || (!limits.rpm && !limits.tpm)) return state.source === "declared" ? { ...state, source: null } : state;
  let next = setLimit(state, "requests", limits.rpm, now);
  next = setLimit(next, "tokens", limits.tpm, now);
  return { ...next, source: "declared" };
}

/** One answer's headers: the limits (unless declared), the remaining counts, a retry-after. */
export function observe(state: PacerState, seen: RateObservation, now: number): PacerState {
  let next = state;
  const windows = DIMENSIONS.filter((d) => seen[d]);
  // Anthropic's `tokens` is the tighter of its input and output windows: the two themselves are kept.
  const own = seen.input || seen.output ? windows.filter((d) => d !== "tokens") : windows;
  if (next.source !== "declared" && own.some((d) => seen[d]?.limit)) {
    for (const d of own) next = setLimit(next, d, seen[d]?.limit, now);
    next = { ...next, source: "headers" };
  }
  const buckets = { ...next.buckets };
  const since = (next.grants ?? []).filter((g) => seen.at !== undefined && g.at >= seen.at);
  for (const d of own) {
    const b = buckets[d];
    const remaining = seen[d]?.remaining;
    if (!b || typeof remaining !== "number") continue;
    // The provider's count when it answered, less what was leased since (and refilled since, at the pace).
    const leased = since.reduce((n, g) => n + (g.units[d] ?? 0), 0);
    const refilled = seen.at === undefined ? 0 : refill({ ...b, level: 0, at: seen.at }, now).level;
    buckets[d] = correct(refill(b, now), remaining - leased + refilled);
  }
  next = { ...next, buckets };
  const retryAfterMs = seen.retryAfterMs;
  if (retryAfterMs && retryAfterMs > 0) next = { ...next, blockedUntil: Math.max(next.blockedUntil, now + Math.min(retryAfterMs, MAX_SHARED_BLOCK_MS)) };
  return bounded(next, now);
}

/** The state with its shared values within their bounds: a block ends at most MAX_SHARED_BLOCK_MS from now (a state stored before the bound may say days). */
export function bounded(state: PacerState, now: number): PacerState {
  const limit = now + MAX_SHARED_BLOCK_MS;
  return Number.isFinite(state.blockedUntil) && state.blockedUntil <= limit ? state : { ...state, blockedUntil: limit };
}

/** What the calls' reservations took beyond their usage, given back (below zero: what they used beyond it, taken). */
export function settle(state: PacerState, unused: Partial<CallCost>): PacerState {
  const buckets = { ...state.buckets };
  for (const d of ["tokens", "input", "output"] as const) {
    const b = buckets[d];
    const units = unused[d] ?? 0;
    if (b && units !== 0) buckets[d] = giveBack(b, units);
  }
  return { ...state, buckets };
}

export function leave(state: PacerState, jobId: string): PacerState {
  if (!(jobId in state.jobs)) return state;
  const jobs = { ...state.jobs };
  delete jobs[jobId];
  return { ...state, jobs };
}

/** Whether any limit is known: without one, nothing is paced. */
export function paces(state: PacerState): boolean {
  return Object.keys(state.buckets).length > 0;
}

/** The unit fairness is measured in: a token limit's, else requests. */
function fairDimension(state: PacerState): Dimension {
  return state.buckets.tokens ? "tokens" : state.buckets.input ? "input" : "requests";
}

/** The job's share among the jobs that are short of what they asked: equal per tenant, then per job. */
function shareOf(jobs: Record<string, JobUse>, jobId: string, now: number): number {
  const me = jobs[jobId] as JobUse;
  const hungry = Object.entries(jobs).filter(([id, j]) => id === jobId || (j.hungry && now - j.seen <= ACTIVE_MS));
  const tenants = new Set(hungry.map(([, j]) => j.tenant));
  const mine = hungry.filter(([, j]) => j.tenant === me.tenant).length;
  return 1 / tenants.size / Math.max(1, mine);
}

export function lease(state: PacerState, ask: LeaseAsk, now: number): { state: PacerState; lease: Lease } {
  const jobs: Record<string, JobUse> = {};
  for (const [id, j] of Object.entries(state.jobs)) if (now - j.seen <= ACTIVE_MS) jobs[id] = j;
  const prior = jobs[ask.jobId];
  const fresh = !prior || now - prior.since >= FAIR_WINDOW_MS;
  const me: JobUse = { tenant: ask.tenant, seen: now, hungry: prior?.hungry ?? false, used: fresh ? 0 : prior.used, since: fresh ? now : prior.since };
  jobs[ask.jobId] = me;
  const buckets = refilled(state.buckets, now);
  const limited = DIMENSIONS.filter((d) => buckets[d] && costOf(d, ask.cost) > 0);
  const share = shareOf(jobs, ask.jobId, now);
  if (now < state.blockedUntil) {
    jobs[ask.jobId] = { ...me, hungry: true };
    return { state: { ...state, buckets, jobs }, lease: { granted: 0, waitMs: state.blockedUntil - now, share } };
  }
  let granted = ask.calls;
  for (const d of limited) granted = Math.min(granted, fits(buckets[d] as Bucket, costOf(d, ask.cost)));
  let fairWait = 0;
  const fair = fairDimension(state);
  const unit = costOf(fair, ask.cost);
  if (share < 1 && buckets[fair] && unit > 0) {
    const allowance = (share * (buckets[fair] as Bucket).perMinute * FAIR_WINDOW_MS) / 60_000;
    const allowed = Math.max(me.used === 0 ? 1 : 0, Math.floor((allowance - me.used) / unit));
    if (allowed < granted) {
      granted = allowed;
      fairWait = me.since + FAIR_WINDOW_MS - now;
    }
  }
  for (const d of limited) buckets[d] = take(buckets[d] as Bucket, granted * costOf(d, ask.cost));
  jobs[ask.jobId] = { ...me, used: me.used + granted * unit, hungry: granted < ask.calls };
  const grants = (state.grants ?? []).filter((g) => now - g.at <= GRANTS_KEPT_MS);
  if (granted > 0) grants.push({ at: now, units: Object.fromEntries(limited.map((d) => [d, granted * costOf(d, ask.cost)])) });
  let waitMs = 0;
  if (granted < ask.calls) {
    const left = ask.calls - granted;
    for (const d of limited) {
      const b = buckets[d] as Bucket;
      const perLease = Math.max(1, Math.floor((b.perMinute * LEASE_MS) / 60_000 / costOf(d, ask.cost)));
      waitMs = Math.max(waitMs, waitFor(b, Math.min(left, perLease), costOf(d, ask.cost)));
    }
    waitMs = Math.max(waitMs, fairWait, 1);
  }
  return { state: { ...state, buckets, jobs, grants }, lease: { granted, waitMs, share } };
}

/** How many calls of `cost` fit now without taking them, and how long until one does (a job's own limit, kept by the job). */
export function room(state: PacerState, cost: CallCost, now: number): { state: PacerState; fits: number; waitMs: number } {
  const buckets = refilled(state.buckets, now);
  let fit = Infinity;
  let waitMs = 0;
  for (const d of DIMENSIONS) {
    const b = buckets[d];
    if (!b || costOf(d, cost) <= 0) continue;
    fit = Math.min(fit, fits(b, costOf(d, cost)));
    waitMs = Math.max(waitMs, waitFor(b, 1, costOf(d, cost)));
  }
  return { state: { ...state, buckets }, fits: fit, waitMs };
}

/** `calls` calls of `cost` taken at `now`. */
export function charge(state: PacerState, cost: CallCost, now: number, calls = 1): PacerState {
  const buckets = refilled(state.buckets, now);
  for (const d of DIMENSIONS) if (buckets[d]) buckets[d] = take(buckets[d] as Bucket, calls * costOf(d, cost));
  return { ...state, buckets };
}

/** The log line a job's pacing link writes when the job leaves: its round trips to the pacer (bench/pacing.ts reads it). */
export const PACER_ASKS_LOG = "rate pacer asks";

/** How a job is paced, as the API shows it (`pacing` on the job, PACING_CHANGED). */
export interface PacingView {
  rpm: number | null;
  tpm: number | null;
  source: "job" | "declared" | "headers" | "adaptive" | null;
  share: number | null;
}

export const NO_PACING: PacingView = { rpm: null, tpm: null, source: null, share: null };

/** A job's pacing as the API shows it: its own model's, and each other model's its stages call (absent when none). */
export interface JobPacingView extends PacingView {
  models?: Record<string, PacingView>;
}

/** The limits as the API shows them (`pacing.rpm`, `pacing.tpm`). */
export function limitsOf(state: PacerState): RateLimit {
  const tokens = state.buckets.tokens ?? state.buckets.input;
  return { rpm: state.buckets.requests?.perMinute ?? null, tpm: tokens?.perMinute ?? null };
}
