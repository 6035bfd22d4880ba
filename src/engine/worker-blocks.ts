/**
 * Which call-worker objects a job runs on. A tenant's WorkerPool lends each running job a block
 * of numbered objects (`<tenant>:w<n>`, n in [start, start + count)), first fit from 0, so the
 * next job starts on objects earlier jobs already created and woke instead of creating
 * `concurrency` new ones. Blocks never overlap: an object serves one job at a time. Pure, so the
 * policy is tested on its own; the leases live in the pool object (durable-objects/worker-pool.ts).
 */

export interface Block {
  start: number;
  count: number;
}

/** The lowest start where `count` objects are free of every block in `taken`. */
export function firstFit(taken: Block[], count: number): number {
  let start = 0;
  for (const block of [...taken].sort((a, b) => a.start - b.start)) {
    if (block.start >= start + count) break;
    start = Math.max(start, block.start + block.count);
  }
  return start;
}

/** The name of slot `slot` of a job: in its tenant's block when it has one, else an object of its own. */
export function workerName(job: { jobId: string; tenantId: string }, block: Block | null, slot: number): string {
  return block ? `${job.tenantId}:w${block.start + slot}` : `${job.jobId}:${slot}`;
}
