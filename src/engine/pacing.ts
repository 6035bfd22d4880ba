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
 * - Fairness: while other jobs are short of what they asked (hungry), the lease goes to the tenant
 *   served least, then to its job served least (fair queuing): each tenant and each job counts
 *   what it was leased (`served`, in tokens when a token limit is known, else in requests), and a
 *   job may take at most one quantum (about a FAIR_WINDOW_MS of its tenant's share, and at least
 *   one call) past the least-served hungry tenant's count, and within its tenant past the
 *   least-served hungry job's. So a tenant's share is 1/N of the limit however many jobs it runs,
 *   and a tenant that starts (or comes back) is lifted to one quantum below the others: it catches
 *   up no more than that. A job or tenant that does not ask takes no share: what it leaves is lent
 *   to the others at once.
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
  /** Units leased to it (its place in its tenant's fair queue). */
  served: number;
}

/** A tenant's place in the fair queue: units leased to its jobs, and when one of them last asked. */
interface TenantUse {
  served: number;
  seen: number;
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
  tenants?: Record<string, TenantUse>;
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
  return next;
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

/** Lifted to one quantum below `floor` (a queue that fell behind by not asking catches up no more than that). */
const caughtUp = (served: number, floor: number, quantum: number): number => Math.max(served, floor - quantum);

export function lease(state: PacerState, ask: LeaseAsk, now: number): { state: PacerState; lease: Lease } {
  const jobs: Record<string, JobUse> = {};
  for (const [id, j] of Object.entries(state.jobs)) if (now - j.seen <= ACTIVE_MS && typeof j.served === "number") jobs[id] = j;
  const tenants: Record<string, TenantUse> = {};
  for (const [id, t] of Object.entries(state.tenants ?? {})) if (now - t.seen <= ACTIVE_MS) tenants[id] = t;
  const prior = jobs[ask.jobId];
  jobs[ask.jobId] = { tenant: ask.tenant, seen: now, hungry: prior?.hungry ?? false, served: prior?.served ?? 0 };
  tenants[ask.tenant] = { served: tenants[ask.tenant]?.served ?? 0, seen: now };
  const buckets = refilled(state.buckets, now);
  const limited = DIMENSIONS.filter((d) => buckets[d] && costOf(d, ask.cost) > 0);
  const share = shareOf(jobs, ask.jobId, now);
  if (now < state.blockedUntil) {
    jobs[ask.jobId] = { ...(jobs[ask.jobId] as JobUse), hungry: true };
    return { state: { ...state, buckets, jobs, tenants }, lease: { granted: 0, waitMs: state.blockedUntil - now, share } };
  }
  let granted = ask.calls;
  for (const d of limited) granted = Math.min(granted, fits(buckets[d] as Bucket, costOf(d, ask.cost)));
  const fair = fairDimension(state);
  const unit = costOf(fair, ask.cost);
  const fairBucket = buckets[fair];
  const queue = fairQueue(jobs, tenants, ask, unit, fairBucket?.perMinute ?? 0);
  let fairWait = 0;
  if (share < 1 && fairBucket && unit > 0) {
    const allowed = Math.max(0, Math.floor(queue.room / unit));
    if (allowed < granted) {
      granted = allowed;
      // Ask again when the others have had about what this job is ahead of them by.
      const perMs = fairBucket.perMinute / 60_000 / queue.hungryTenants;
      fairWait = Math.min(FAIR_WINDOW_MS, Math.max(1, Math.ceil((unit - queue.room) / perMs)));
    }
  }
  for (const d of limited) buckets[d] = take(buckets[d] as Bucket, granted * costOf(d, ask.cost));
  const me = jobs[ask.jobId] as JobUse;
  jobs[ask.jobId] = { ...me, served: queue.jobServed + granted * unit, hungry: granted < ask.calls };
  tenants[ask.tenant] = { served: queue.tenantServed + granted * unit, seen: now };
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
  return { state: { ...state, buckets, jobs, tenants, grants }, lease: { granted, waitMs, share } };
}

/**
 * Where the asking job stands in the fair queues (its tenant's among the hungry tenants, the job's
 * among its tenant's hungry jobs), each lifted to one quantum below the least-served other: the
 * units it may take now (`room`), and its tenant's and its own counts after the lift.
 */
function fairQueue(jobs: Record<string, JobUse>, tenants: Record<string, TenantUse>, ask: LeaseAsk, unit: number, perMinute: number) {
  const hungry = Object.entries(jobs).filter(([id, j]) => id !== ask.jobId && j.hungry); // `jobs`: the active ones only
  const otherTenants = new Set(hungry.map(([, j]) => j.tenant).filter((t) => t !== ask.tenant));
  const hungryTenants = otherTenants.size + 1;
  const mine = hungry.filter(([, j]) => j.tenant === ask.tenant);
  const tenantQuantum = Math.max(unit, (perMinute * FAIR_WINDOW_MS) / 60_000 / hungryTenants);
  const jobQuantum = Math.max(unit, tenantQuantum / (mine.length + 1));
  const least = (values: number[]) => (values.length === 0 ? Infinity : Math.min(...values));
  const otherTenantsLeast = least([...otherTenants].map((t) => tenants[t]?.served ?? 0));
  const otherJobsLeast = least(mine.map(([, j]) => j.served));
  const tenantServed =
    otherTenantsLeast === Infinity ? (tenants[ask.tenant]?.served ?? 0) : caughtUp(tenants[ask.tenant]?.served ?? 0, otherTenantsLeast, tenantQuantum);
  const jobServed = otherJobsLeast === Infinity ? (jobs[ask.jobId]?.served ?? 0) : caughtUp(jobs[ask.jobId]?.served ?? 0, otherJobsLeast, jobQuantum);
  const tenantRoom = Math.min(otherTenantsLeast, tenantServed) + tenantQuantum - tenantServed;
  const jobRoom = Math.min(otherJobsLeast, jobServed) + jobQuantum - jobServed;
  return { room: Math.min(tenantRoom, jobRoom), tenantServed, jobServed, hungryTenants };
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
