/** The job's counters and the views of its stages and budget, as D1 and the API show them. */
import type { JobProgress } from "../../src/db/jobs";
import type { JobStatus } from "../../src/engine/types";
import type { BudgetKeeper, budgetView } from "./budget";
import type { JobSpec } from "../../src/operators/registry";
import type { JobLog } from "./job-log";
import { DEFAULT_DEADLINE_SECS } from "../../src/operators/execution-field";
import { costOut, usageOut, type Counters } from "../../src/engine/counters";
import type { JobPacingView } from "../../src/engine/pacing";
import type { CircuitState } from "./circuits";
import { parseModel, type Provider } from "../../src/llm/models";
import { deploymentKey } from "../../src/llm/credential";
import type { CoordinatorStore, StageRow } from "./store";

export function stagesView(stages: StageRow[]) {
  return stages.map((s) => ({
    name: s.name,
    status: s.status,
    total: s.total,
    completed: s.completed,
    succeeded: s.succeeded,
    failed: s.failed,
    usage: usageOut(s),
    cost_usd: costOut(s),
    ...(s.step !== null ? { step: s.step } : {}),
  }));
}

export function progressOf(p: {
  status: JobStatus;
  counters: Counters;
  total: number; // the items over the stages (JobLog.total)
  stages: ReturnType<typeof stagesView>;
  completedAt: string | null;
  output: unknown;
  error: unknown;
  budget: ReturnType<typeof budgetView>;
  pauseReason: string | null;
  effectiveConcurrency: number;
  pacing: JobPacingView;
  execution: { mode: string; deadline_secs: number };
  batches: unknown[];
  models: unknown[];
}): JobProgress {
  const c = p.counters;
  return {
    status: p.status,
    total: p.total,
    completed: c.completed,
    succeeded: c.succeeded,
    failed: c.failed,
    total_attempts: c.total_attempts,
    input_tokens: c.input_tokens,
    output_tokens: c.output_tokens,
    cached_calls: c.cached_calls,
    cached_input_tokens: c.cached_input_tokens,
    cached_output_tokens: c.cached_output_tokens,
    cache_read_tokens: c.cache_read_tokens,
    cache_write_tokens: c.cache_write_tokens,
    cost_usd: c.cost_usd,
    unpriced_calls: c.unpriced_calls,
    duplicated_input_tokens: c.duplicated_input_tokens,
    duplicated_output_tokens: c.duplicated_output_tokens,
    duplicated_cost_usd: c.duplicated_cost_usd,
    interrupted_calls: c.interrupted_calls,
    interrupted_input_tokens: c.interrupted_input_tokens,
    completed_at: p.completedAt,
    stage: p.stages.find((s) => s.status === "running")?.name ?? null,
    stages: p.stages,
    output: p.output,
    error: p.error,
    budget: p.budget,
    pause_reason: p.pauseReason,
    effective_concurrency: p.effectiveConcurrency,
    pacing: p.pacing,
    execution: p.execution,
    batches: p.batches,
    models: p.models,
  };
}

/** What a job's progress is read from (./job-run.ts). */
interface ProgressSource {
  readonly spec: JobSpec;
  readonly status: JobStatus;
  readonly log: JobLog;
  readonly store: CoordinatorStore;
  readonly budget: BudgetKeeper;
  readonly concurrency: { cap(spec: JobSpec): number };
  readonly batches: { views(): unknown[] };
  readonly circuits: { state(model: string, now: number): CircuitState };
  readonly pools: { size(provider: Provider): number };
  pacingView(spec: JobSpec): JobPacingView;
}

/** The job as D1 shows it: status, counters, stages, output, error, budget, pacing, execution. */
export function runProgress(run: ProgressSource): JobProgress {
  const spec = run.spec;
  return progressOf({
    status: run.status,
    counters: run.log.counters,
    total: run.log.total(),
    stages: stagesView(run.store.stages()),
    completedAt: run.store.getMeta("completed_at") ?? null,
    output: run.log.shape.showsOutput ? (run.store.getMeta("output") ?? null) : null,
    error: run.store.getMeta("error") ?? null,
    budget: run.budget.view(spec.budget),
    pauseReason: run.store.getMeta("pause_reason") ?? null,
    effectiveConcurrency: run.concurrency.cap(spec),
    pacing: run.pacingView(spec),
    execution: { mode: spec.execution?.mode ?? "realtime", deadline_secs: spec.execution?.deadlineSecs ?? DEFAULT_DEADLINE_SECS },
    batches: run.batches.views(),
    models: modelsView(spec, run.circuits, run.pools, run.store.getMeta("answered") ?? {}),
  });
}

/**
 * A job with fallbacks, or on a pool of deployments: each model of its chain, its circuit and the
 * items it answered, and on a pool each deployment's circuit for it (none without either).
 */
function modelsView(spec: JobSpec, circuits: ProgressSource["circuits"], pools: ProgressSource["pools"], answered: Record<string, number>) {
  const chain = [spec.model, ...(spec.fallbacks ?? [])];
  const pooled = (model: string) => pools.size(parseModel(model).provider);
  if (chain.length === 1 && pooled(spec.model) < 2) return [];
  const now = Date.now();
  return chain.map((model) => {
    const view = { model, circuit: circuits.state(model, now), answered: answered[model] ?? 0 };
    const size = pooled(model);
    if (size < 2) return view;
    const deployments = Array.from({ length: size }, (_, d) => ({ deployment: d + 1, circuit: circuits.state(deploymentKey(model, d), now) }));
    // On a pool the model is out only when every deployment is: closed while one is, half open while one probes.
    const states = new Set(deployments.map((d) => d.circuit));
    const circuit: CircuitState = states.has("closed") ? "closed" : states.has("half_open") ? "half_open" : "open";
    return { ...view, circuit, deployments };
  });
}
