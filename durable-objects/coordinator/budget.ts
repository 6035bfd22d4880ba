/**
 * Token budgets inside the coordinator: what a dispatch reserves, and whether it fits.
 * Reserve-then-settle: a dispatch reserves its estimate (prompt + output bound) and the report
 * settles it to the provider's usage, so spend passes the total only by the error of the prompt
 * estimates of calls already in flight.
 */
import { outputBound, promptTokens } from "../../src/engine/estimate";
import type { StageWork } from "../../src/engine/types";
import type { CompiledTemplate } from "../../src/template/jinja";

export interface Spend {
  total: number;
  by_stage: Record<string, number>;
}

export const NO_SPEND: Spend = { total: 0, by_stage: {} };

export function addSpend(spend: Spend, stage: string, tokens: number): Spend {
  return { total: spend.total + tokens, by_stage: { ...spend.by_stage, [stage]: (spend.by_stage[stage] ?? 0) + tokens } };
}

/** The tokens one dispatch of a task reserves. A prompt that cannot render reserves only its output bound (it will fail without a call). */
export function reservation(work: StageWork, template: CompiledTemplate, vars: Record<string, unknown>): number {
  let prompt: number;
  const spec = work.kind === "call" ? work.call : work.agent;
  try {
    prompt = promptTokens(template.renderVars(vars), spec.systemPrompt);
  } catch {
    prompt = 0;
  }
  const perCall = prompt + outputBound(spec.maxTokens);
  if (work.kind === "call") return perCall;
  // A sub-session makes up to max_turns calls; its own token cap bounds it when smaller.
  const turns = perCall * work.agent.maxTurns;
  return work.agent.maxTotalTokens === null ? turns : Math.min(turns, work.agent.maxTotalTokens + outputBound(spec.maxTokens));
}
