/**
 * One task's model call from a v2 request: the task's own fields (`model`, `system_prompt`,
 * `output_schema`, `max_tokens`, `temperature`) over the request's defaults, its template checked
 * for `required` variables (400 `template_missing_variable`, naming the one missing) and its
 * schema compiled — the same for every operator's tasks (reduce, map-reduce, pipelines).
 */
import { limits, renderLimits } from "../config";
import { compileOutputSchema } from "../output/validate";
import { compileTemplate } from "../template/jinja";
import type { CommonJobRequest } from "./base-fields";
import { boundedMaxTokens } from "./max-tokens";
import type { CallSpec } from "../engine/types";

export interface TaskFields {
  prompt_template: string;
  model?: string;
  fallbacks?: string[];
  system_prompt?: string | null;
  output_schema?: Record<string, unknown> | null;
  max_tokens?: number | null;
  temperature?: number | null;
}

export interface TaskDefaults extends CommonJobRequest {
  system_prompt?: string | null;
  temperature?: number | null;
  max_tokens?: number | null;
  timeout_secs: number;
  retry_guidance: string;
}

export function taskCall(env: Env, defaults: TaskDefaults, task: TaskFields, field: string, required: string[]): CallSpec {
  compileTemplate(task.prompt_template, `${field}.prompt_template`, required, renderLimits(env), "template_missing_variable");
  const outputSchema = task.output_schema ?? null;
  if (outputSchema) compileOutputSchema(outputSchema);
  return callSpec(env, defaults, {
    model: task.model ?? defaults.model,
    systemPrompt: task.system_prompt === undefined ? (defaults.system_prompt ?? null) : task.system_prompt,
    template: task.prompt_template,
    field: `${field}.prompt_template`,
    outputSchema,
    temperature: task.temperature === undefined ? (defaults.temperature ?? null) : task.temperature,
    maxTokens: task.max_tokens === undefined ? defaults.max_tokens : task.max_tokens,
    ...(task.fallbacks?.length ? { fallbacks: task.fallbacks } : {}),
  });
}

/**
 * The call of an operator of one model call per item (map, filter, classify): the request's
 * fields, with the template (`field`, which must read `item`, or the variables in `reads`), the
 * operator's instruction before the job's system prompt, the output schema the operator makes of
 * them (and another model: a cascade's).
 */
export function itemCall(
  env: Env,
  body: TaskDefaults,
  parts: { template: string; field: string; instruction?: string; outputSchema: Record<string, unknown> | null; model?: string; reads?: string[] },
): CallSpec {
  compileTemplate(parts.template, parts.field, parts.reads ?? "item", renderLimits(env), parts.reads ? "template_missing_variable" : undefined);
  if (parts.outputSchema) compileOutputSchema(parts.outputSchema);
  // The operator's instruction first, the job's own system prompt after it.
  const own = body.system_prompt ?? null;
  const systemPrompt = parts.instruction ? (own ? `${parts.instruction}\n\n${own}` : parts.instruction) : own;
  return callSpec(env, body, { ...parts, systemPrompt, model: parts.model ?? body.model, temperature: body.temperature ?? null, maxTokens: body.max_tokens });
}

interface CallParts {
  model: string;
  fallbacks?: string[];
  systemPrompt: string | null;
  template: string;
  field: string;
  outputSchema: Record<string, unknown> | null;
  temperature: number | null;
  maxTokens: number | null | undefined;
}

function callSpec(env: Env, defaults: TaskDefaults, c: CallParts): CallSpec {
  return {
    model: c.model,
    systemPrompt: c.systemPrompt,
    promptTemplate: c.template,
    templateField: c.field,
    outputSchema: c.outputSchema,
    temperature: c.temperature,
    maxTokens: boundedMaxTokens(c.maxTokens, defaults),
    timeoutMs: Math.round(defaults.timeout_secs * 1000),
    retryGuidance: defaults.retry_guidance,
    maxOutputBytes: limits(env).maxOutputBytes,
    cacheTtlSecs: defaults.cache?.ttl_secs ?? null,
    ...(defaults.prompt_cache === false ? { promptCache: false } : {}),
    ...(c.fallbacks ? { fallbacks: c.fallbacks } : {}),
  };
}
