/** The job's counters and the views of its stages and budget, as D1 and the API show them. */
import type { JobProgress } from "../../src/db/jobs";
import type { BudgetSpec, JobStatus } from "../../src/engine/types";
import type { Spend } from "./budget";
import type { PacingView } from "../../src/engine/pacing";
import type { StageRow } from "./store";

export interface Counters {
  completed: number;
  succeeded: number;
  failed: number;
  total_attempts: number;
  input_tokens: number;
  output_tokens: number;
  seq: number; // completion order of results, increasing across recovers
  cached_calls: number; // tasks answered from the response cache, and what their original calls cost
  cached_input_tokens: number;
  cached_output_tokens: number;
}

export const ZERO: Counters = {
  completed: 0, succeeded: 0, failed: 0, total_attempts: 0, input_tokens: 0, output_tokens: 0, seq: 0,
  cached_calls: 0, cached_input_tokens: 0, cached_output_tokens: 0,
};

/** The counters a task answered from the response cache adds (`cached`: what its original call cost). */
export function cachedCounts(cached: { input_tokens: number; output_tokens: number } | null): Partial<Counters> {
  return cached ? { cached_calls: 1, cached_input_tokens: cached.input_tokens, cached_output_tokens: cached.output_tokens } : {};
}

/** A job's usage as the API shows it: tokens spent, and the cached calls apart (the tokens they saved). */
export function usageView(c: Pick<Counters, "input_tokens" | "output_tokens" | "cached_calls" | "cached_input_tokens" | "cached_output_tokens">) {
  return {
    input_tokens: c.input_tokens,
    output_tokens: c.output_tokens,
    cached: { calls: c.cached_calls, input_tokens: c.cached_input_tokens, output_tokens: c.cached_output_tokens },
  };
}

export function stagesView(stages: StageRow[]) {
  return stages.map((s) => ({
    name: s.name,
    status: s.status,
    total: s.total,
    completed: s.completed,
    succeeded: s.succeeded,
    failed: s.failed,
    usage: { input_tokens: s.input_tokens, output_tokens: s.output_tokens },
  }));
}

export function budgetView(budget: BudgetSpec | null, spend: Spend, reserved: number) {
  if (!budget) return null;
  return { total: budget.total, spent: spend.total, reserved, by_stage: spend.by_stage };
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
  pacing: PacingView;
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
    completed_at: p.completedAt,
    stage: p.stages.find((s) => s.status === "running")?.name ?? null,
    stages: p.stages,
    output: p.output,
    error: p.error,
    budget: p.budget,
    pause_reason: p.pauseReason,
    effective_concurrency: p.effectiveConcurrency,
    pacing: p.pacing,
  };
}
