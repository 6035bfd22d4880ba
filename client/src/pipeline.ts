/** Pipeline request bodies: the client's camelCase steps in the API's spelling. */
import { compact } from "./compact.js";
import { classifyFields, filterFields, rankFields, resolveFields } from "./operator-fields.js";
import type { AgentLoopOptions, AgentStep, BatchConfig, CommonOptions, ExecutionOptions, TokenBudget, ContextManagement, OperatorStep, PipelineOptions, PipelineStep, ReduceTask, StepInput, SubtaskOptions } from "./types.js";

export { compact };

export function taskBody(t: ReduceTask): Record<string, unknown> {
  return compact({
    prompt_template: t.promptTemplate,
    output_schema: t.outputSchema,
    model: t.model,
    system_prompt: t.systemPrompt,
    max_tokens: t.maxTokens,
    temperature: t.temperature,
  });
}

const contextBody = (c: ContextManagement | undefined) =>
  c ? compact({ inherit_context: c.inheritContext, accumulate_data: c.accumulateData, accumulation_format: c.accumulationFormat, subset: c.subset }) : undefined;

const batchBody = (b: BatchConfig | undefined) =>
  b ? compact({ items: b.items, as: b.as, error_handling: b.errorHandling, max_concurrent: b.maxConcurrent }) : undefined;

const isTask = (v: StepInput): v is { task: ReduceTask & { inputs?: Record<string, unknown> } } =>
  typeof v === "object" && v !== null && !Array.isArray(v) && "task" in v && typeof (v as { task: unknown }).task === "object";

function inputsBody(inputs: Record<string, StepInput> | undefined): Record<string, unknown> | undefined {
  if (!inputs) return undefined;
  return Object.fromEntries(
    Object.entries(inputs).map(([name, v]) => [name, isTask(v) ? { task: compact({ ...taskBody(v.task), inputs: v.task.inputs }) } : v]),
  );
}

const subtasksBody = (o: SubtaskOptions | undefined) =>
  o ? compact({ enabled: o.enabled, max_depth: o.maxDepth, max_total_tokens: o.maxTotalTokens, timeout_secs: o.timeoutSecs }) : undefined;

/** An agent loop's fields in the API's spelling (an agentic-map job's and a pipeline agent step's). */
export function agentLoopBody(o: AgentLoopOptions): Record<string, unknown> {
  return {
    max_turns: o.maxTurns,
    continuation_message: o.continuationMessage,
    completion_marker: o.completionMarker,
    read_only: o.readOnly,
    tools: o.tools?.map((t) =>
      t.type === "http"
        ? compact({ type: "http", name: t.name, description: t.description, input_schema: t.inputSchema, url: t.url, read_only: t.readOnly })
        : compact({ type: "mcp", url: t.url, allowed_tools: t.allowedTools }),
    ),
    max_context_tokens: o.maxContextTokens,
    max_total_tokens: o.maxTotalTokens,
    subtasks: subtasksBody(o.subtasks),
  };
}

function agentFields(s: AgentStep): Record<string, unknown> {
  return {
    prompt_template: s.promptTemplate,
    model: s.model,
    system_prompt: s.systemPrompt,
    temperature: s.temperature,
    max_tokens: s.maxTokens,
    ...agentLoopBody(s),
  };
}

export function stepBody(s: PipelineStep): Record<string, unknown> {
  const base = { id: s.id, type: s.type, context_management: contextBody(s.contextManagement) };
  switch (s.type) {
    case "sequential":
      return compact({ ...base, steps: s.steps.map(stepBody) });
    case "reduce":
      return compact({
        ...base,
        inputs: inputsBody(s.inputs),
        inputs_from: s.inputsFrom,
        initial_value: s.initialValue,
        inner_task: s.innerTask ? taskBody(s.innerTask) : undefined,
        reduction_task: taskBody(s.reductionTask),
      });
    case "agent":
      return compact({ ...base, inputs: inputsBody(s.inputs), ...agentFields(s), batch: batchBody(s.batch) });
    case "filter":
    case "classify":
    case "rank":
    case "resolve":
      return compact({ ...base, ...operatorStepBody(s) });
    default:
      return compact({ ...base, inputs: inputsBody(s.inputs), ...taskBody(s), batch: batchBody(s.batch), execution: executionBody(s) });
  }
}

/** An operator step: its list, the call fields it sets, and the operator's own fields. */
function operatorStepBody(s: OperatorStep): Record<string, unknown> {
  const own = s.type === "filter" ? filterFields(s) : s.type === "classify" ? classifyFields(s) : s.type === "rank" ? rankFields(s) : resolveFields(s);
  return {
    inputs: inputsBody(s.inputs),
    inputs_from: s.inputsFrom,
    model: s.model,
    system_prompt: s.systemPrompt,
    max_tokens: s.maxTokens,
    temperature: s.temperature,
    timeout_secs: s.timeoutSecs,
    execution: executionBody(s),
    ...own,
  };
}

/** The fields every job-creating request shares (map-reduce has no `concurrency`). */
type SharedFields = Omit<CommonOptions<never>, "onEvent" | "idempotencyKey" | "concurrency" | "tokenBudget"> & { concurrency?: number; tokenBudget?: TokenBudget };

export function commonFields(o: SharedFields): Record<string, unknown> {
  return {
    model: o.model,
    system_prompt: o.systemPrompt,
    temperature: o.temperature,
    max_tokens: o.maxTokens,
    timeout_secs: o.timeoutSecs,
    max_retries: o.maxRetries,
    concurrency: o.concurrency,
    webhook: o.webhook,
    metadata: o.metadata,
    token_budget: o.tokenBudget ? compact({ total: o.tokenBudget.total, usd: o.tokenBudget.usd, on_exhausted: o.tokenBudget.onExhausted }) : undefined,
    cache: o.cache ? { ttl_secs: o.cache.ttlSecs } : undefined,
    prompt_cache: o.promptCache,
    execution: executionBody(o),
  };
}

/** `execution`, for the options that take it (ExecutionOptions). */
function executionBody(o: object): Record<string, unknown> | undefined {
  const e = (o as ExecutionOptions).execution;
  return e ? compact({ mode: e.mode, deadline_secs: e.deadlineSecs }) : undefined;
}

export function pipelineBody(o: Omit<PipelineOptions, "onEvent">): Record<string, unknown> {
  return compact({
    ...commonFields(o),
    retry_guidance: o.retryGuidance,
    inputs: o.inputs,
    context_management: contextBody(o.contextManagement),
    steps: o.steps.map(stepBody),
  });
}
