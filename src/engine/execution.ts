/**
 * The execution mode as the engine applies it (contract v3): a job in `batch` or `auto` mode runs
 * the stages its operator calls batchable (independent single calls) through the batch executor;
 * every other stage, and a stage `auto` has moved to realtime, keeps its own work.
 */
import type { JobSpecBase, Operator, StageWork } from "./types";

/** The operator as the job runs it: its batchable stages' calls become batch work. */
export function withExecution<S extends JobSpecBase>(op: Operator<S>, realtime: ReadonlySet<string> = new Set()): Operator<S> {
  const batchable = op.batchable;
  if (!batchable) return op;
  return {
    ...op,
    work: (spec: S, stage: string): StageWork => {
      const work = op.work(spec, stage);
      const mode = spec.execution?.mode ?? "realtime";
      if (work.kind !== "call" || mode === "realtime" || realtime.has(stage) || !batchable(spec, stage)) return work;
      return { kind: "batch", tenantId: work.tenantId, call: work.call };
    },
  };
}
