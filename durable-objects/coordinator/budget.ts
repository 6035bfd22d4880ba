/**
 * Budgets inside the coordinator, in tokens and in dollars: what a dispatch reserves, and whether
 * it fits (and how long a dispatch may take, which bounds what it holds).
 * Reserve-then-settle: a dispatch reserves its estimate (prompt + output bound, priced at the
 * stage model's input and output prices for a dollar limit) and the report settles it to the
 * provider's usage, so spend passes a limit only by the error of the prompt estimates of calls
 * already in flight.
 */
import { outputBound, promptEstimate, StageTemplates } from "../../src/engine/estimate";
import type { BudgetSpec, StageWork } from "../../src/engine/types";
import { allowances } from "../../src/engine/allocation";
import { executorOf } from "../../src/engine/executors";
import type { Spend } from "./job-meta";
import type { UsageSums } from "../../src/engine/counters";
import { priceOf, usd } from "../../src/llm/prices";
import type { CoordinatorStore } from "./store";
import type { RenderLimits } from "../../src/template/render-budget";
import type { CompiledTemplate } from "../../src/template/jinja";

export const NO_SPEND: Spend = { total: 0, by_stage: {}, usd: 0 };

export function addSpend(spend: Spend, stage: string, usage: Pick<UsageSums, "input_tokens" | "output_tokens" | "cost_usd">): Spend {
  const tokens = usage.input_tokens + usage.output_tokens;
  return {
    total: spend.total + tokens,
    by_stage: { ...spend.by_stage, [stage]: (spend.by_stage[stage] ?? 0) + tokens },
    usd: (spend.usd ?? 0) + usage.cost_usd,
  };
}

/** What one dispatch reserves. */
export interface Reservation {
  tokens: number;
  usd: number;
}

const NOTHING: Reservation = { tokens: 0, usd: 0 };

/**
 * What one dispatch of a task reserves: its prompt and output bound for each call it may make,
 * within its own token cap; in dollars at the model's input and output prices (0 without a price:
 * a dollar budget refuses such models at submission).
 */
function reservation(env: object, work: StageWork, template: CompiledTemplate, vars: Record<string, unknown>): Reservation {
  const executor = executorOf(work);
  const spec = executor.call(work);
  const calls = executor.callsPerDispatch(work);
  let prompt = promptEstimate(template, vars, spec.systemPrompt) * calls;
  let output = spec.embedding ? 0 : outputBound(spec.maxTokens) * calls; // an embedding writes no tokens
  const cap = executor.tokenCap(work);
  if (cap !== null && prompt + output > cap + outputBound(spec.maxTokens)) {
    // Capped: the cap's tokens, counted at the dearer (output) price.
    output = Math.min(output, cap + outputBound(spec.maxTokens));
    prompt = Math.max(0, cap + outputBound(spec.maxTokens) - output);
  }
  const price = priceOf(env, spec.model);
  // A provider batch's line, or a flex call (OpenAI prices the tier at the batch rates): the batch price.
  const discount = (executor.lane === "batch" || spec.serviceTier === "flex") && price ? price.batch : 1;
  return { tokens: prompt + output, usd: price ? ((prompt * price.input + output * price.output) / 1e6) * discount : 0 };
}

/**
 * One job's budget: what it has spent (meta `spend`, mirrored in memory), what a dispatch would
 * reserve, and the figures the API shows. Without a budget every dispatch fits and reserves 0.
 */
export class BudgetKeeper {
  readonly #store: CoordinatorStore;
  readonly #templates: StageTemplates;
  readonly #env: object;
  #spent: Spend;

  constructor(store: CoordinatorStore, limits: RenderLimits, env: object) {
    this.#store = store;
    this.#templates = new StageTemplates(limits);
    this.#env = env;
    this.#spent = { ...NO_SPEND, ...store.getMeta("spend") };
  }

  /** What a dispatch reserves, or null when it does not fit what is left. */
  reserve(budget: BudgetSpec | null, stage: string, work: StageWork, vars: () => Record<string, unknown>): Reservation | null {
    if (!budget) return NOTHING;
    const r = reservation(this.#env, work, this.#templates.get(stage, work), vars());
    const held = this.#store.reserved();
    if (budget.total !== null && this.#spent.total + held.tokens + r.tokens > budget.total) return null;
    if (budget.usd != null && (this.#spent.usd ?? 0) + held.usd + r.usd > budget.usd) return null;
    if (!budget.allocation || budget.total === null) return r;
    const allowance = allowances(budget.total, budget.allocation, this.#store.stages(), this.#spent.by_stage)[stage] ?? 0;
    return (this.#spent.by_stage[stage] ?? 0) + this.#store.reserved(stage).tokens + r.tokens <= allowance ? r : null;
  }

  /** A call's prompt estimate (the pacer's token reservation). */
  promptEstimate(stage: string, work: StageWork, vars: Record<string, unknown>): number {
    return promptEstimate(this.#templates.get(stage, work), vars, executorOf(work).call(work).systemPrompt);
  }

  /** A report settles: the provider's usage is spent (the dispatch's reservation is released with its row). */
  spend(stage: string, usage: UsageSums): void {
    this.#spent = addSpend(this.#spent, stage, usage);
    this.#store.setMetaSoon("spend", this.#spent);
  }

  view(budget: BudgetSpec | null) {
    return budgetView(budget, this.#spent, this.#store.reserved());
  }

  /** A recover may change the spec: templates are compiled again. */
  respec(): void {
    this.#templates.clear();
  }
}

export function budgetView(budget: BudgetSpec | null, spend: Spend, reserved: Reservation) {
  if (!budget) return null;
  const dollars = budget.usd == null ? null : { limit: budget.usd, spent: usd(spend.usd ?? 0), reserved: usd(reserved.usd) };
  return { total: budget.total, spent: spend.total, reserved: reserved.tokens, by_stage: spend.by_stage, usd: dollars };
}
