/**
 * Fallback chains (contract v4, "Providers as they fail"): the models a stage's calls may go to,
 * in order. A task starts on the first; when its model is unavailable (an outage, no capacity,
 * unknown or retired, a spent quota: ../llm/types.ts `Unavailable`) its next attempt goes to the
 * next one (its `route`, ./task-machine.ts). Each model keeps its own pacing, prompt cache and
 * price; a validation failure never falls back.
 *
 * The job's `fallbacks` follow the job's model: a realtime call stage on it gets them. A call that
 * names its own (a pipeline step's, an input or reduce task's, a map-reduce task's `fallbacks`)
 * has that chain instead, whatever its model. A stage on another model without its own (a cascade's
 * cheaper one), a stage whose answers must be its model's (a cascade's oracle sample: its guarantee
 * is about that model), a provider batch's lines and agent sessions keep their one model.
 */
import type { JobSpecBase, StageWork } from "./types";

/** At most this many fallbacks after the job's model: each is one more model a stuck item may try. */
export const MAX_FALLBACKS = 3;

/** The models a stage's calls may go to, its own first. */
export function modelChain(spec: Pick<JobSpecBase, "model" | "fallbacks">, work: StageWork): string[] {
  if (work.kind === "agent") return [work.agent.model];
  const own = work.call.model;
  if (work.kind !== "call" || work.oneModel) return [own];
  if (work.call.fallbacks?.length) return [own, ...work.call.fallbacks];
  if (own !== spec.model || !spec.fallbacks?.length) return [own];
  return [own, ...spec.fallbacks];
}

/** The stage's work with its calls on `model` (a model of its chain). */
export function routedWork(work: StageWork, model: string): StageWork {
  if (work.kind === "agent" || work.call.model === model) return work;
  return { ...work, call: { ...work.call, model } };
}
