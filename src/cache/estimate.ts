/**
 * An estimate's cached calls: the tasks whose prompts are known before the job runs (a map's
 * items, a map-reduce's mapper batches, a pipeline's first step, a reduction's first call), keyed
 * as the worker will key them, and looked up in the tenant's cache with the job's TTL.
 */
import type { TaskEstimate } from "../engine/estimate-job";
import { callKey, freshKeys } from "./response-cache";

export async function cachedTasks(db: D1Database, tenantId: string, tasks: TaskEstimate[], baseUrlOf: (model: string) => string | null): Promise<Set<number>> {
  const byTtl = new Map<number, { index: number; key: string }[]>();
  for (const [index, task] of tasks.entries()) {
    const ttlSecs = task.exact?.call.cacheTtlSecs;
    if (!task.exact || !ttlSecs) continue;
    const key = await callKey(tenantId, task.exact.call, baseUrlOf(task.exact.call.model), task.exact.prompt);
    const group = byTtl.get(ttlSecs) ?? [];
    group.push({ index, key });
    byTtl.set(ttlSecs, group);
  }
  const cached = new Set<number>();
  for (const [ttlSecs, group] of byTtl) {
    const fresh = await freshKeys(
      { db, tenantId, ttlSecs },
      group.map((g) => g.key),
    );
    for (const g of group) if (fresh.has(g.key)) cached.add(g.index);
  }
  return cached;
}
