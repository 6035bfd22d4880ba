/**
 * The estimate of a whole job, before it exists: one function serves `?dry_run=true` and the 422
 * `token_budget_exceeded` check. Every task of the plan is rendered as it would be (its prompt
 * counted by ./estimate.ts); a task whose inputs are earlier outputs (a reduction's accumulator)
 * is rendered without them and bounded by those outputs' `max_tokens` (the operator says how).
 */
import type { RenderLimits } from "../template/budget";
import { ESTIMATE_METHOD, outputBound, promptEstimate, StageTemplates } from "./estimate";
import type { JobSpecBase, Operator, Plan } from "./types";

export interface StageEstimate {
  calls: number;
  input_tokens: number;
  output_tokens: number;
}

export interface Estimate {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  by_stage: Record<string, StageEstimate>;
  method: string;
}

/** `plan` is the job's plan (`op.plan(spec, inputs)`), computed once by the submission. */
export function estimateJob<S extends JobSpecBase>(
  op: Operator<S>,
  spec: S,
  plan: Plan,
  limits: RenderLimits,
): Estimate {
  const byStage: Record<string, StageEstimate> = {};
  for (const stage of plan.stages) if (!stage.skipped) byStage[stage.name] = { calls: 0, input_tokens: 0, output_tokens: 0 };
  const templates = new StageTemplates(limits);
  let bounded = false;
  let agents = false;
  const assumed = op.estimateTasks?.(spec, plan);
  for (const task of assumed?.tasks ?? plan.tasks) {
    const work = op.work(spec, task.stage);
    const call = work.kind === "call" ? work.call : work.agent;
    const { vars, boundTokens } = op.estimateVars ? op.estimateVars(spec, task) : { vars: op.vars(spec, task), boundTokens: 0 };
    bounded ||= boundTokens > 0;
    agents ||= work.kind === "agent";
    const prompt = promptEstimate(templates.get(task.stage, work), vars, call.systemPrompt);
    const calls = work.kind === "agent" ? work.agent.maxTurns : 1; // an agent's turns: the upper bound
    const stage = (byStage[task.stage] ??= { calls: 0, input_tokens: 0, output_tokens: 0 });
    stage.calls += calls;
    stage.input_tokens += (prompt + boundTokens) * calls;
    stage.output_tokens += outputBound(call.maxTokens) * calls;
  }
  const stages = Object.values(byStage);
  const input = stages.reduce((n, s) => n + s.input_tokens, 0);
  const output = stages.reduce((n, s) => n + s.output_tokens, 0);
  const notes = [`${ESTIMATE_METHOD}: prompts rendered and counted at ceil(characters / 4); outputs at max_tokens (1,024 when unset)`];
  if (bounded) notes.push("prompts that hold earlier outputs count those outputs at their max_tokens bound");
  if (assumed) notes.push(assumed.note);
  if (agents) notes.push("agent items count max_turns calls, each with the first prompt");
  return {
    calls: stages.reduce((n, s) => n + s.calls, 0),
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    by_stage: byStage,
    method: notes.join("; "),
  };
}

/** What a user can change when the estimate is over the budget. */
export function budgetSuggestions(estimate: Estimate, budget: number): string[] {
  const out = [`Raise token_budget.total to at least ${estimate.total_tokens} (the estimate).`];
  if (estimate.output_tokens > estimate.input_tokens) {
    out.push("Set a lower max_tokens: each call's output is counted at that bound (1,024 when unset).");
  }
  const share = budget / Math.max(1, estimate.total_tokens);
  out.push(`Submit about ${Math.max(1, Math.floor(share * 100))}% of the inputs per job, or shorten the prompt templates.`);
  return out;
}
