/** A job's stored results read by index (an evaluation's sample of another job's results). */
import type { StoredResult } from "./jobs";

/** D1 binds at most 100 values a statement: the indices go in chunks under that. */
const IN_CHUNK = 90;

/** The indices of a stage's stored results, in order (at most a job's items: bounded by the deployment's MAX_ITEMS_PER_JOB). */
export async function resultIndices(db: D1Database, jobId: string, stage: string): Promise<number[]> {
  const { results } = await db.prepare("SELECT idx FROM results WHERE job_id = ? AND stage = ? ORDER BY idx").bind(jobId, stage).all<{ idx: number }>();
  return results.map((r) => r.idx);
}

/** The stored results of a stage at these indices, by index (an index with none is absent). */
export async function resultsAt(db: D1Database, jobId: string, stage: string, indices: number[]): Promise<Map<number, StoredResult>> {
  const out = new Map<number, StoredResult>();
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < indices.length; i += IN_CHUNK) {
    const chunk = indices.slice(i, i + IN_CHUNK);
    statements.push(
      db.prepare(`SELECT idx, data FROM results WHERE job_id = ? AND stage = ? AND idx IN (${chunk.map(() => "?").join(", ")})`).bind(jobId, stage, ...chunk),
    );
  }
  if (statements.length === 0) return out;
  for (const page of await db.batch<{ idx: number; data: string }>(statements))
    for (const row of page.results) out.set(row.idx, JSON.parse(row.data) as StoredResult);
  return out;
}
