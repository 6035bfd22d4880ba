/**
 * The estimate of a whole job, before it exists: one function serves `?dry_run=true` and the 422
 * `token_budget_exceeded` check. Every task of the plan is rendered as it would be (its prompt
 * counted by ./estimate.ts); a task whose inputs are earlier outputs (a reduction's accumulator)
 * is rendered without them and bounded by those outputs' `max_tokens` (the operator says how).
 */
import type { RenderLimits } from "../template/budget";
import { ESTIMATE_METHOD, outputBound, promptTokens, renderedPrompt, StageTemplates } from "./estimate";
import type { CallSpec, JobSpecBase, Operator, Plan } from "./types";
import { executorOf } from "./executors";

export interface StageEstimate {
  calls: number;
  input_tokens: number;
  output_tokens: number;
}

export interface Estimate {
  calls: number;
  cached_calls: number; // of `calls`: those the response cache already answers (prompts known before the job runs)
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  by_stage: Record<string, StageEstimate>;
  method: string;
}

/** One task's share of an estimate; `exact`: its call and prompt, when the prompt is known before the job runs. */
export interface TaskEstimate {
  stage: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  exact: { call: CallSpec; prompt: string } | null;
}

/** Every task of the plan, rendered as it would be; `plan` is the job's plan (`op.plan(spec, inputs)`), computed once by the submission. */
export function taskEstimates<S extends JobSpecBase>(op: Operator<S>, spec: S, plan: Plan, limits: RenderLimits): { tasks: TaskEstimate[]; stages: string[]; notes: string[] } {
  const templates = new StageTemplates(limits);
  let bounded = false;
  const kindNotes = new Set<string>(); // what the executors of the jobs' kinds of work say of their estimates
  const assumed = op.estimateTasks?.(spec, plan);
  const tasks: TaskEstimate[] = [];
  // A prompt is rendered once per template and vars object: an operator whose tasks share their
  // vars (a pipeline's batch elements, estimated before their items are known) costs one render
  // per step, not one per element — estimates stay linear in the number of tasks.
  const rendered = new Map<unknown, Map<object, string | null>>();
  const render = (template: Parameters<typeof renderedPrompt>[0], vars: Record<string, unknown>): string | null => {
    const byVars = rendered.get(template) ?? new Map<object, string | null>();
    rendered.set(template, byVars);
    if (!byVars.has(vars)) byVars.set(vars, renderedPrompt(template, vars));
    return byVars.get(vars) ?? null;
  };
  for (const task of assumed?.tasks ?? plan.tasks) {
    const work = op.work(spec, task.stage);
    const executor = executorOf(work);
    const call = executor.call(work);
    const { vars, boundTokens } = op.estimateVars ? op.estimateVars(spec, task) : { vars: op.vars(spec, task), boundTokens: 0 };
    bounded ||= boundTokens > 0;
    if (executor.estimateNote) kindNotes.add(executor.estimateNote);
    const prompt = render(templates.get(task.stage, work), vars);
    const calls = executor.callsPerDispatch(work); // an agent's turns: the upper bound
    tasks.push({
      stage: task.stage,
      calls,
      input_tokens: ((prompt === null ? 0 : promptTokens(prompt, call.systemPrompt)) + boundTokens) * calls,
      output_tokens: outputBound(call.maxTokens) * calls,
      exact: executor.cacheable && work.kind === "call" && boundTokens === 0 && (!assumed || ("exact" in task && task.exact === true)) && prompt !== null ? { call: work.call, prompt } : null,
    });
  }
  const notes = [`${ESTIMATE_METHOD}: prompts rendered and counted at ceil(characters / 4); outputs at max_tokens (1,024 when unset)`];
  if (bounded) notes.push("prompts that hold earlier outputs count those outputs at their max_tokens bound");
  if (assumed?.note) notes.push(assumed.note);
  notes.push(...kindNotes);
  return { tasks, stages: plan.stages.filter((s) => !s.skipped).map((s) => s.name), notes };
}

/**
 * The estimate of the job; `cached` lists the tasks (by position in `tasks`) the response cache
 * already answers: counted in `cached_calls`, at no tokens.
 */
export function summarize(estimates: ReturnType<typeof taskEstimates>, cached: ReadonlySet<number> = new Set()): Estimate {
  const byStage: Record<string, StageEstimate> = {};
  for (const name of estimates.stages) byStage[name] = { calls: 0, input_tokens: 0, output_tokens: 0 };
  estimates.tasks.forEach((task, i) => {
    const stage = (byStage[task.stage] ??= { calls: 0, input_tokens: 0, output_tokens: 0 });
    stage.calls += task.calls;
    if (cached.has(i)) return;
    stage.input_tokens += task.input_tokens;
    stage.output_tokens += task.output_tokens;
  });
  const stages = Object.values(byStage);
  const input = stages.reduce((n, s) => n + s.input_tokens, 0);
  const output = stages.reduce((n, s) => n + s.output_tokens, 0);
  const notes = cached.size > 0 ? [...estimates.notes, "calls the response cache already answers count no tokens"] : estimates.notes;
  return {
    calls: stages.reduce((n, s) => n + s.calls, 0),
    cached_calls: cached.size,
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
