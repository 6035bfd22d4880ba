/**
 * A LIMIT written into a statement's text instead of bound. SQLite compiles a statement whose LIMIT
 * is a bound parameter again at its first step after every new binding (the value may change the
 * plan), and workerd binds each `exec` anew: `LIMIT ?` re-parsed and re-planned the dispatch's read
 * of its next task at every call, ~50 µs of CPU per item on S2 — the hot path's most expensive
 * statement (BENCHMARKS.md, "The dispatch's read recompiled at every call"). Up to EXACT_UP_TO the
 * text says the limit itself; above, the next power of two, and the caller keeps the first `limit`
 * rows: a handful of texts per query in the runtime's statement cache, whatever the limits asked.
 */
const EXACT_UP_TO = 16;

/** A count as a LIMIT may say it: an integer ≥ 0 (a negative, fractional or infinite one cut down). */
const count = (limit: number): number => Math.max(0, Math.floor(Number.isFinite(limit) ? limit : 0));

/** The LIMIT clause for exactly `limit` rows: where a query's limits are few (constants), so no row is read past them. */
export const exactLimit = (limit: number): string => `LIMIT ${count(limit)}`;

/** The LIMIT clause for at most `limit` rows, and what cuts the rows read down to `limit`. */
export function limitClause(limit: number): { clause: string; keep: <T>(rows: T[]) => T[] } {
  const n = count(limit);
  const written = n <= EXACT_UP_TO ? n : 2 ** Math.ceil(Math.log2(n));
  return { clause: exactLimit(written), keep: (rows) => (rows.length > n ? rows.slice(0, n) : rows) };
}
