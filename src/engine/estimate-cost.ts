/**
 * An estimate's totals: tokens, the provider's prompt cache, and dollars (contract v3). Each
 * stage's calls share the prefix of their prompts (system prompt and the template's text before
 * its first variable); the estimate assumes the provider caches it after the stage's first call:
 * Anthropic writes it then (when it is long enough to be marked, src/llm/prompt-cache.ts) and
 * every later call reads it; OpenAI caches prefixes of 1,024 tokens and more by itself, in
 * 128-token steps, and bills no writes. Dollars at the shipped or deployment prices, realtime and
 * through the provider's batch API; null when a model has no price.
 */
import { costOf, usd, type Price } from "../llm/prices";
import type { Estimate, StageEstimate, TaskEstimate } from "./estimate-job";

const EMPTY = (): StageEstimate => ({
  calls: 0,
  input_tokens: 0,
  output_tokens: 0,
  output_tokens_max: 0,
  cached_input_tokens: 0,
  cache_write_input_tokens: 0,
  cost_usd: 0,
  cost_usd_max: 0,
  batch_cost_usd: 0,
  batch_cost_usd_max: 0,
});

const plus = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : a + b);
const rounded = (n: number | null): number | null => (n === null ? null : usd(n));

/**
 * The estimate of the job; `cached` lists the tasks (by position in `tasks`) the response cache
 * already answers: counted in `cached_calls`, at no tokens. `price` looks up a model's price.
 */
export function summarize(
  estimates: { tasks: TaskEstimate[]; stages: string[]; notes: string[] },
  cached: ReadonlySet<number> = new Set(),
  price: (model: string) => Price | null = () => null,
): Estimate {
  const byStage: Record<string, StageEstimate> = {};
  for (const name of estimates.stages) byStage[name] = EMPTY();
  let cacheNote = false;
  estimates.tasks.forEach((task, i) => {
    const stage = (byStage[task.stage] ??= EMPTY());
    const first = stage.calls === 0;
    stage.calls += task.calls;
    if (cached.has(i)) return;
    const shared = task.sharedPrefix;
    const read = shared && !first ? Math.min(shared.tokens, task.input_tokens) : 0;
    const write = shared?.writes && first ? shared.tokens : 0;
    cacheNote ||= shared !== null;
    stage.input_tokens += task.input_tokens;
    stage.output_tokens += task.output_tokens;
    stage.output_tokens_max += task.output_tokens_max;
    stage.cached_input_tokens += read;
    stage.cache_write_input_tokens += write;
    const p = price(task.model);
    const usage = { input_tokens: task.input_tokens, output_tokens: task.output_tokens, cache_read_tokens: read, cache_write_tokens: write };
    const bound = { ...usage, output_tokens: task.output_tokens_max };
    stage.cost_usd = plus(stage.cost_usd, p ? costOf(p, usage) : null);
    stage.cost_usd_max = plus(stage.cost_usd_max, p ? costOf(p, bound) : null);
    stage.batch_cost_usd = plus(stage.batch_cost_usd, p ? costOf(p, usage, "batch") : null);
    stage.batch_cost_usd_max = plus(stage.batch_cost_usd_max, p ? costOf(p, bound, "batch") : null);
  });
  const stages = Object.values(byStage);
  const sum = (f: (s: StageEstimate) => number) => stages.reduce((n, s) => n + f(s), 0);
  const input = sum((s) => s.input_tokens);
  const output = sum((s) => s.output_tokens);
  const outputMax = sum((s) => s.output_tokens_max);
  const dollars = (f: (s: StageEstimate) => number | null) => rounded(stages.reduce<number | null>((n, s) => plus(n, f(s)), 0));
  const realtime = dollars((s) => s.cost_usd);
  const realtimeMax = dollars((s) => s.cost_usd_max);
  const notes = [...estimates.notes];
  if (cached.size > 0) notes.push("calls the response cache already answers count no tokens");
  if (cacheNote) notes.push("the provider's prompt cache is assumed to hold each stage's shared prefix after the stage's first call");
  return {
    calls: sum((s) => s.calls),
    cached_calls: cached.size,
    input_tokens: input,
    output_tokens: output,
    output_tokens_max: outputMax,
    total_tokens: input + outputMax,
    cached_input_tokens: sum((s) => s.cached_input_tokens),
    cache_write_input_tokens: sum((s) => s.cache_write_input_tokens),
    cost_usd: realtime,
    cost_usd_max: realtimeMax,
    cost_usd_by_mode: { realtime, batch: dollars((s) => s.batch_cost_usd) },
    cost_usd_max_by_mode: { realtime: realtimeMax, batch: dollars((s) => s.batch_cost_usd_max) },
    by_stage: Object.fromEntries(
      Object.entries(byStage).map(([name, { batch_cost_usd: _, batch_cost_usd_max: __, ...s }]) => [
        name,
        { ...s, cost_usd: rounded(s.cost_usd), cost_usd_max: rounded(s.cost_usd_max) },
      ]),
    ),
    method: notes.join("; "),
  };
}
