/**
 * Token budgets inside the coordinator: what a dispatch reserves, and whether it fits (and how
 * long a dispatch may take, which bounds what it holds).
 * Reserve-then-settle: a dispatch reserves its estimate (prompt + output bound) and the report
 * settles it to the provider's usage, so spend passes the total only by the error of the prompt
 * estimates of calls already in flight.
 */
import { outputBound, promptEstimate, StageTemplates } from "../../src/engine/estimate";
import type { BudgetSpec, StageWork } from "../../src/engine/types";
import { allowances } from "../../src/engine/allocation";
import { executorOf } from "../../src/engine/executors";
import type { Spend } from "./job-meta";
import type { CoordinatorStore } from "./store";
import type { RenderLimits } from "../../src/template/budget";
import type { CompiledTemplate } from "../../src/template/jinja";

export const NO_SPEND: Spend = { total: 0, by_stage: {} };

export function addSpend(spend: Spend, stage: string, tokens: number): Spend {
  return { total: spend.total + tokens, by_stage: { ...spend.by_stage, [stage]: (spend.by_stage[stage] ?? 0) + tokens } };
}

/** The tokens one dispatch of a task reserves: its prompt and output bound for each call it may make, within its own token cap. */
function reservation(work: StageWork, template: CompiledTemplate, vars: Record<string, unknown>): number {
  const executor = executorOf(work);
  const spec = executor.call(work);
  const calls = (promptEstimate(template, vars, spec.systemPrompt) + outputBound(spec.maxTokens)) * executor.callsPerDispatch(work);
  const cap = executor.tokenCap(work);
  return cap === null ? calls : Math.min(calls, cap + outputBound(spec.maxTokens));
}

/**
 * One job's budget: what it has spent (meta `spend`, mirrored in memory), what a dispatch would
 * reserve, and the figures the API shows. Without a budget every dispatch fits and reserves 0.
 */
export class BudgetKeeper {
  readonly #store: CoordinatorStore;
  readonly #templates: StageTemplates;
  #spent: Spend;

  constructor(store: CoordinatorStore, limits: RenderLimits) {
    this.#store = store;
    this.#templates = new StageTemplates(limits);
    this.#spent = store.getMeta("spend") ?? NO_SPEND;
  }

  /** The tokens a dispatch reserves, or null when they do not fit what is left. */
  reserve(budget: BudgetSpec | null, stage: string, work: StageWork, vars: () => Record<string, unknown>): number | null {
    if (!budget) return 0;
    const tokens = reservation(work, this.#templates.get(stage, work), vars());
    if (this.#spent.total + this.#store.reservedTokens() + tokens > budget.total) return null;
    if (!budget.allocation) return tokens;
    const allowance = allowances(budget, this.#store.stages(), this.#spent.by_stage)[stage] ?? 0;
    return (this.#spent.by_stage[stage] ?? 0) + this.#store.reservedTokens(stage) + tokens <= allowance ? tokens : null;
  }

  /** A call's prompt estimate (the pacer's token reservation). */
  promptEstimate(stage: string, work: StageWork, vars: Record<string, unknown>): number {
    return promptEstimate(this.#templates.get(stage, work), vars, executorOf(work).call(work).systemPrompt);
  }

  /** A report settles: the provider's usage is spent (the dispatch's reservation is released with its row). */
  spend(stage: string, tokens: number): void {
    this.#spent = addSpend(this.#spent, stage, tokens);
    this.#store.setMetaSoon("spend", this.#spent);
  }

  view(budget: BudgetSpec | null) {
    return budgetView(budget, this.#spent, this.#store.reservedTokens());
  }

  /** A recover may change the spec: templates are compiled again. */
  respec(): void {
    this.#templates.clear();
  }
}

export function budgetView(budget: BudgetSpec | null, spend: Spend, reserved: number) {
  if (!budget) return null;
  return { total: budget.total, spent: spend.total, reserved, by_stage: spend.by_stage };
}
