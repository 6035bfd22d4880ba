/**
 * The execution mode as the engine applies it (contract v3, "Execution modes"; v4, flex):
 * - `batch`: the stages its operator calls batchable (independent single calls) go through the
 *   batch executor;
 * - `flex`: every call stage's calls ask OpenAI's flex tier (`service_tier: "flex"`), with the
 *   tier's long timeout;
 * - `auto`, a ladder: the batchable stages start as batch work; as the deadline comes near they
 *   move to the flex tier where every model of the job has one, then to the standard tier (the
 *   coordinator's batch deadlines decide when: durable-objects/coordinator/batch-deadlines.ts).
 * Every other stage keeps its own work; agents always run on the standard tier.
 */
import { parseModel } from "../llm/models";
import type { CallSpec, JobSpecBase, Operator, StageWork } from "./types";

/** A flex call's timeout: OpenAI's advice for the tier (its calls queue for spare capacity), and the most the contract allows. */
export const FLEX_TIMEOUT_MS = 15 * 60_000;

/** Where the stages of a job in mode auto are on its ladder (meta `realtime_stages`, `flex_stages`). */
export interface Ladder {
  /** Stages moved off provider batches. */
  readonly realtime: ReadonlySet<string>;
  /** Of those, the ones on the flex tier still; the rest run on the standard tier. */
  readonly flex: ReadonlySet<string>;
}

const BATCH_ONLY: Ladder = { realtime: new Set(), flex: new Set() };

/** Whether a model's provider has a flex tier (OpenAI's; an OpenAI-compatible server has no such promise). */
export const hasFlexTier = (model: string): boolean => parseModel(model).provider === "openai";

/** Every model of a job (its own and its fallbacks) has a flex tier. */
export const flexible = (spec: JobSpecBase): boolean => [spec.model, ...(spec.fallbacks ?? [])].every(hasFlexTier);

/** A call's timeout as it is sent: on the flex tier, the tier's (never shorter than the stage's own `timeout_secs`, which stays the standard tier's). */
export const sentTimeoutMs = (call: Pick<CallSpec, "timeoutMs" | "serviceTier">): number =>
  call.serviceTier === "flex" ? Math.max(call.timeoutMs, FLEX_TIMEOUT_MS) : call.timeoutMs;

/** A call stage's work on the flex tier. */
export function flexWork(work: StageWork): StageWork {
  return work.kind === "call" ? { ...work, call: { ...work.call, serviceTier: "flex" } } : work;
}

/** The operator as the job runs it: its stages' calls as the execution mode and the ladder say. */
export function withExecution<S extends JobSpecBase>(op: Operator<S>, ladder: Ladder = BATCH_ONLY): Operator<S> {
  const batchable = op.batchable;
  return {
    ...op,
    work: (spec: S, stage: string): StageWork => {
      const work = op.work(spec, stage);
      const mode = spec.execution?.mode ?? "realtime";
      if (work.kind !== "call" || mode === "realtime") return work;
      if (mode === "flex") return flexWork(work);
      if (!batchable?.(spec, stage)) return work;
      if (!ladder.realtime.has(stage)) return { kind: "batch", tenantId: work.tenantId, call: work.call };
      return ladder.flex.has(stage) ? flexWork(work) : work;
    },
  };
}
