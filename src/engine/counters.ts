/** A job's counters (the coordinator keeps them; D1 and the API show them) and their usage view. */
import { usd } from "../llm/prices";
import type { Usage } from "../llm/types";

/**
 * The sums a task, a stage and a job keep of their calls' usage: tokens (the provider's prompt
 * cache's reads and writes as parts of the input), dollars, and the calls that spent tokens on a
 * model with no price (then the total's `cost_usd` is null: never a partial sum shown as the cost).
 */
export type UsageSums = {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  unpriced_calls: number;
};

export const NO_USAGE_SUMS: UsageSums = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced_calls: 0 };

/** One call's (priced) usage as sums. */
export function sumsOf(u: Usage): UsageSums {
  return {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    cache_read_tokens: u.cache_read_tokens ?? 0,
    cache_write_tokens: u.cache_write_tokens ?? 0,
    cost_usd: u.cost_usd ?? 0,
    unpriced_calls: u.cost_usd === null ? 1 : 0,
  };
}

export function addSums(a: UsageSums, b: UsageSums): UsageSums {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
    cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
    cost_usd: a.cost_usd + b.cost_usd,
    unpriced_calls: a.unpriced_calls + b.unpriced_calls,
  };
}

/** Usage as results, stages and jobs show it (contract v3: the prompt cache's tokens by their API names). */
export function usageOut(s: Pick<UsageSums, "input_tokens" | "output_tokens"> & Partial<UsageSums>) {
  return {
    input_tokens: s.input_tokens,
    output_tokens: s.output_tokens,
    cached_input_tokens: s.cache_read_tokens ?? 0,
    cache_write_input_tokens: s.cache_write_tokens ?? 0,
  };
}

/** Dollars as shown: null when any call had no price. */
export const costOut = (s: Partial<UsageSums>): number | null => ((s.unpriced_calls ?? 0) > 0 ? null : usd(s.cost_usd ?? 0));

/** A job's counts as D1 and the API show them: its finished tasks, its attempts, its tokens. */
export interface JobCounts extends UsageSums {
  completed: number;
  succeeded: number;
  failed: number;
  total_attempts: number;
  cached_calls: number; // tasks answered from the response cache, and what their original calls cost
  cached_input_tokens: number;
  cached_output_tokens: number;
  /** Execution mode auto: calls billed for an item that had (or was getting) its result another way — not in the tokens above; their dollars are in cost_usd. */
  duplicated_input_tokens: number;
  duplicated_output_tokens: number;
  duplicated_cost_usd: number;
  /**
   * Calls sent again because their first hand never reported (a restart mid-call): the provider may
   * have billed the first. Their input tokens are the re-sent prompt's (the same prompt); their
   * output is unknown. Not in the tokens above, nor in cost_usd.
   */
  interrupted_calls: number;
  interrupted_input_tokens: number;
}

type DuplicatedCounts = Pick<JobCounts, "duplicated_input_tokens" | "duplicated_output_tokens" | "duplicated_cost_usd">;
type InterruptedCounts = Pick<JobCounts, "interrupted_calls" | "interrupted_input_tokens">;

/** A call billed twice (execution mode auto): its tokens apart, its dollars in the job's cost too (the bill). */
export function duplicatedCounts(usage: UsageSums): Partial<Counters> {
  return {
    duplicated_input_tokens: usage.input_tokens,
    duplicated_output_tokens: usage.output_tokens,
    duplicated_cost_usd: usage.cost_usd,
    cost_usd: usage.cost_usd,
    unpriced_calls: usage.unpriced_calls,
  };
}

/** The coordinator's counters: the job's counts, and the completion order of its results. */
export interface Counters extends JobCounts {
  seq: number; // completion order of results, increasing across recovers
}

export const ZERO: Counters = {
  ...NO_USAGE_SUMS,
  completed: 0,
  succeeded: 0,
  failed: 0,
  total_attempts: 0,
  seq: 0,
  cached_calls: 0,
  cached_input_tokens: 0,
  cached_output_tokens: 0,
  duplicated_input_tokens: 0,
  duplicated_output_tokens: 0,
  duplicated_cost_usd: 0,
  interrupted_calls: 0,
  interrupted_input_tokens: 0,
};

/** The counters a task answered from the response cache adds (`cached`: what its original call cost). */
export function cachedCounts(cached: { input_tokens: number; output_tokens: number } | null): Partial<Counters> {
  return cached ? { cached_calls: 1, cached_input_tokens: cached.input_tokens, cached_output_tokens: cached.output_tokens } : {};
}

/** A job's usage as the API shows it: tokens spent, and the cached calls apart (the tokens they saved). */
export function usageView(
  c: Pick<Counters, "input_tokens" | "output_tokens" | "cached_calls" | "cached_input_tokens" | "cached_output_tokens"> &
    Partial<UsageSums & DuplicatedCounts & InterruptedCounts>,
) {
  return {
    ...usageOut(c),
    duplicated: { input_tokens: c.duplicated_input_tokens ?? 0, output_tokens: c.duplicated_output_tokens ?? 0, cost_usd: usd(c.duplicated_cost_usd ?? 0) },
    cached: { calls: c.cached_calls, input_tokens: c.cached_input_tokens, output_tokens: c.cached_output_tokens },
    interrupted: { calls: c.interrupted_calls ?? 0, input_tokens: c.interrupted_input_tokens ?? 0 },
  };
}
