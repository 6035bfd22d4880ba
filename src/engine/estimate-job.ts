/**
 * The estimate of a whole job, before it exists: one function serves `?dry_run=true` and the 422
 * `token_budget_exceeded` check. Every task of the plan is rendered as it would be (its prompt
 * counted by ./estimate.ts) while one request's work budget lasts, the rest scaled from a sample
 * (./estimate-sample.ts); a task whose inputs are earlier outputs (a reduction's accumulator)
 * is rendered without them and bounded by those outputs' `max_tokens` (the operator says how).
 */
import type { RenderLimits } from "../template/render-budget";
import { ESTIMATE_METHOD, outputBound, promptTokens, renderedPrompt, StageTemplates } from "./estimate";
import { fitPrompts, renderOrder, sampleNote, scaledTokens, sizeOf, type PromptFit } from "./estimate-sample";
import { WorkBudget } from "./work-budget";
import { expectedOutputTokens, OUTPUT_SIZE_NOTE } from "./output-size";
import type { CallSpec, JobSpecBase, Operator, Plan } from "./types";
import { executorOf } from "./executors";
import { sharedPrefix, type SharedPrefix } from "../llm/prompt-cache";

export interface StageEstimate {
  calls: number;
  input_tokens: number;
  /** Expected (./output-size.ts); `output_tokens_max`: the bound budgets reserve. */
  output_tokens: number;
  output_tokens_max: number;
  cached_input_tokens: number; // of input_tokens: read from the provider's prompt cache
  cache_write_input_tokens: number; // of input_tokens: written to it
  cost_usd: number | null; // realtime, expected; null: a model without a price
  cost_usd_max: number | null; // realtime, at the output bound
  batch_cost_usd: number | null; // the same calls through the provider's batch API
  batch_cost_usd_max: number | null;
}

export interface Estimate {
  calls: number;
  cached_calls: number; // of `calls`: those the response cache already answers (prompts known before the job runs)
  input_tokens: number;
  output_tokens: number;
  output_tokens_max: number;
  /** input_tokens + output_tokens_max: what a token budget must hold (the 422 check). */
  total_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  cost_usd: number | null;
  cost_usd_max: number | null;
  cost_usd_by_mode: { realtime: number | null; batch: number | null };
  cost_usd_max_by_mode: { realtime: number | null; batch: number | null };
  by_stage: Record<string, Omit<StageEstimate, "batch_cost_usd" | "batch_cost_usd_max">>;
  method: string;
}

/** One task's share of an estimate; `exact`: its call and prompt, when the prompt is known before the job runs. */
export interface TaskEstimate {
  stage: string;
  model: string;
  calls: number;
  input_tokens: number;
  /** Expected (./output-size.ts), and the bound (`max_tokens`, 1,024 when unset). */
  output_tokens: number;
  output_tokens_max: number;
  /** Its prompt's prefix shared with the stage's other calls, as the provider's prompt cache keeps it (./estimate-cost.ts). */
  sharedPrefix: SharedPrefix | null;
  exact: { call: CallSpec; prompt: string } | null;
}

/**
 * Every task of the plan, rendered as it would be — within `work` (one request's bound, ./work-budget.ts):
 * past it, the rest are scaled from a sample (./estimate-sample.ts) and `notes` says so. `plan` is
 * the job's plan (`op.plan(spec, inputs)`), computed once by the submission.
 */
export function taskEstimates<S extends JobSpecBase>(
  op: Operator<S>,
  spec: S,
  plan: Plan,
  limits: RenderLimits,
  work: WorkBudget = new WorkBudget(),
): { tasks: TaskEstimate[]; stages: string[]; notes: string[] } {
  const templates = new StageTemplates(limits);
  let bounded = false;
  const kindNotes = new Set<string>(); // what the executors of the jobs' kinds of work say of their estimates
  const assumed = op.estimateTasks?.(spec, plan);
  const facts = (assumed?.tasks ?? plan.tasks).map((task) => {
    const stageWork = op.work(spec, task.stage);
    const executor = executorOf(stageWork);
    const { vars, boundTokens } = op.estimateVars ? op.estimateVars(spec, task) : { vars: op.vars(spec, task), boundTokens: 0 };
    bounded ||= boundTokens > 0;
    if (executor.estimateNote) kindNotes.add(executor.estimateNote);
    return { task, work: stageWork, executor, call: executor.call(stageWork), vars, boundTokens, template: templates.get(task.stage, stageWork) };
  });
  // A prompt is rendered once per template and vars object: an operator whose tasks share their
  // vars (a pipeline's batch elements, estimated before their items are known) costs one render
  // per step, not one per element. undefined: not rendered (the work budget was spent first).
  const prompts: (string | null | undefined)[] = new Array<string | null | undefined>(facts.length);
  const memo = new Map<unknown, Map<object, string | null>>();
  let rendered = 0;
  for (const i of renderOrder(facts.map((f) => f.task.stage))) {
    if (work.spent) break;
    const f = facts[i] as (typeof facts)[number];
    const byVars = memo.get(f.template) ?? new Map<object, string | null>();
    memo.set(f.template, byVars);
    if (!byVars.has(f.vars)) {
      const prompt = renderedPrompt(f.template, f.vars, work);
      work.produced(prompt);
      byVars.set(f.vars, prompt);
    }
    prompts[i] = byVars.get(f.vars) ?? null;
    rendered++;
  }
  const sizes = new WeakMap<object, number>();
  const fits = new Map<string, PromptFit | null>();
  const prefixes = new Map<string, SharedPrefix | null>(); // a stage's shared prefix, as its rendered prompts have it
  if (rendered < facts.length) {
    const points = new Map<string, { size: number; tokens: number }[]>();
    facts.forEach((f, i) => {
      const prompt = prompts[i];
      if (prompt === undefined || prompt === null) return;
      const list = points.get(f.task.stage) ?? [];
      list.push({ size: sizeOf(f.vars, sizes), tokens: promptTokens(prompt, f.call.systemPrompt) });
      points.set(f.task.stage, list);
    });
    for (const f of facts) if (!fits.has(f.task.stage)) fits.set(f.task.stage, fitPrompts(points.get(f.task.stage) ?? []));
  }
  const tasks = facts.map((f, i): TaskEstimate => {
    const { task, work: stageWork, executor, call, boundTokens } = f;
    const prompt = prompts[i];
    const calls = executor.callsPerDispatch(stageWork); // an agent's turns: the upper bound
    const cacheable = stageWork.kind === "call" && stageWork.call.promptCache !== false;
    let prefix: SharedPrefix | null = null;
    if (prompt !== undefined && prompt !== null && cacheable) {
      prefix = sharedPrefix(call.model, call.systemPrompt, prompt, call.promptTemplate);
      if (!prefixes.has(task.stage)) prefixes.set(task.stage, prefix);
    } else if (prompt === undefined) prefix = prefixes.get(task.stage) ?? null;
    const tokens =
      prompt === undefined
        ? scaledTokens(fits.get(task.stage) ?? null, sizeOf(f.vars, sizes), call.promptTemplate, call.systemPrompt)
        : prompt === null
          ? 0
          : promptTokens(prompt, call.systemPrompt);
    return {
      stage: task.stage,
      model: call.model,
      sharedPrefix: prefix,
      calls,
      input_tokens: (tokens + boundTokens) * calls,
      // An embedding writes no tokens: its vector is not billed as output.
      output_tokens: call.embedding ? 0 : expectedOutputTokens(stageWork.kind === "agent" ? null : stageWork.call.outputSchema, call.maxTokens) * calls,
      output_tokens_max: call.embedding ? 0 : outputBound(call.maxTokens) * calls,
      exact:
        executor.cacheable &&
        stageWork.kind === "call" &&
        boundTokens === 0 &&
        (!assumed || ("exact" in task && task.exact === true)) &&
        typeof prompt === "string"
          ? { call: stageWork.call, prompt }
          : null,
    };
  });
  const notes = [`${ESTIMATE_METHOD}: prompts rendered and counted at ceil(characters / 4); ${OUTPUT_SIZE_NOTE}`];
  if (rendered < facts.length) notes.push(sampleNote(rendered, facts.length, fits.values()));
  if (bounded) notes.push("prompts that hold earlier outputs count those outputs at their max_tokens bound");
  if (assumed?.note) notes.push(assumed.note);
  notes.push(...kindNotes);
  return { tasks, stages: plan.stages.filter((s) => !s.skipped).map((s) => s.name), notes };
}

/** What a user can change when the estimate is over the budget. */
export function budgetSuggestions(estimate: Estimate, budget: number): string[] {
  const out = [`Raise token_budget.total to at least ${estimate.total_tokens} (the estimate).`];
  if (estimate.output_tokens_max > estimate.input_tokens) {
    out.push("Set a lower max_tokens: each call's output is counted at that bound (1,024 when unset).");
  }
  const share = budget / Math.max(1, estimate.total_tokens);
  out.push(`Submit about ${Math.max(1, Math.floor(share * 100))}% of the inputs per job, or shorten the prompt templates.`);
  return out;
}

/** What a user can change when the estimate's dollars are over `token_budget.usd`. */
export function usdSuggestions(estimate: Estimate, usd: number): string[] {
  const out = [`Raise token_budget.usd to at least ${estimate.cost_usd_max} (the estimate's bound).`];
  const batch = estimate.cost_usd_max_by_mode.batch;
  if (batch !== null && batch <= usd) out.push(`Run it with execution.mode "batch" (estimated $${batch}), where the provider has a batch API.`);
  out.push("Set a lower max_tokens (each call's output is counted at that bound), or use a cheaper model.");
  return out;
}
