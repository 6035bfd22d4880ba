/**
 * One rate limit as a token bucket: `perMinute` units refill continuously and the bucket holds
 * half a second of them (BURST_SECS), so calls are spread evenly over the minute instead of sent
 * in per-minute bursts (providers quantize their limits to short periods: OpenAI may enforce
 * 60,000 RPM as 1,000 a second). Half a second, and a refill at PACE of the limit, leave the
 * provider's own window some room: calls that leave at exactly its rate and burst meet it empty,
 * and the jitter of a busy runtime on the way (a lease's calls bunched with the next one's) makes
 * 429s — measured with three jobs on a key enforced per second, beside a second test suite.
 * Pure data and functions: the pacer keeps buckets in storage.
 */
export const BURST_SECS = 0.5;
export const PACE = 0.97;

export interface Bucket {
  perMinute: number;
  level: number; // units available at `at` (negative: a call larger than the bucket went out on a full one)
  at: number; // ms
}

export function bucket(perMinute: number, now: number): Bucket {
  return { perMinute, level: capacity(perMinute), at: now };
}

/** What the bucket holds when full: BURST_SECS' worth, and at least one unit. */
export function capacity(perMinute: number): number {
  return Math.max(1, (perMinute * BURST_SECS) / 60);
}

export function refill(b: Bucket, now: number): Bucket {
  if (now <= b.at) return b;
  return { ...b, level: Math.min(capacity(b.perMinute), b.level + ((now - b.at) * b.perMinute * PACE) / 60_000), at: now };
}

/** How many calls of `cost` units each fit now (a call larger than the bucket fits once it is full). */
export function fits(b: Bucket, cost: number): number {
  if (cost <= 0) return Infinity;
  const unit = Math.min(cost, capacity(b.perMinute));
  if (b.level < unit) return 0;
  return Math.max(1, Math.floor(b.level / cost));
}

/** Milliseconds until `calls` calls of `cost` each fit, or as many as a full bucket holds (0: now). */
export function waitFor(b: Bucket, calls: number, cost: number): number {
  if (cost <= 0) return 0;
  const cap = capacity(b.perMinute);
  const target = cost > cap ? cap : Math.min(calls, Math.max(1, Math.floor(cap / cost))) * cost;
  const needed = target - b.level;
  return needed <= 0 ? 0 : Math.ceil((needed * 60_000) / (b.perMinute * PACE));
}

/** The bucket as it will be `ms` from now if nothing is taken (past full: a lease may use what refills while its calls go out). */
export function ahead(b: Bucket, ms: number): Bucket {
  return { ...b, level: b.level + (ms * b.perMinute * PACE) / 60_000 };
}

export function take(b: Bucket, units: number): Bucket {
  return { ...b, level: b.level - units };
}

/** Units given back (a call's reservation settled below what it took), never past full. */
export function giveBack(b: Bucket, units: number): Bucket {
  return { ...b, level: Math.min(capacity(b.perMinute), b.level + units) };
}

/** A new limit per minute (the level scaled to the new capacity, so a lower limit takes effect at once). */
export function relimit(b: Bucket, perMinute: number): Bucket {
  if (perMinute === b.perMinute) return b;
  return { perMinute, level: Math.min(capacity(perMinute), (b.level * capacity(perMinute)) / capacity(b.perMinute)), at: b.at };
}

/** The provider says `remaining` units are left: our view never holds more than that. */
export function correct(b: Bucket, remaining: number): Bucket {
  return remaining < b.level ? { ...b, level: remaining } : b;
}
