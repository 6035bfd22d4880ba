/** A job's counters (the coordinator keeps them; D1 and the API show them) and their usage view. */

/** A job's counts as D1 and the API show them: its finished tasks, its attempts, its tokens. */
export interface JobCounts {
  completed: number;
  succeeded: number;
  failed: number;
  total_attempts: number;
  input_tokens: number;
  output_tokens: number;
  cached_calls: number; // tasks answered from the response cache, and what their original calls cost
  cached_input_tokens: number;
  cached_output_tokens: number;
}

/** The coordinator's counters: the job's counts, and the completion order of its results. */
export interface Counters extends JobCounts {
  seq: number; // completion order of results, increasing across recovers
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
