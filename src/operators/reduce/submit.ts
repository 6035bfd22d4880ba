/**
 * POST /v1/reduce submissions: both templates checked for their variables (400
 * `template_missing_variable` naming the one missing), schemas compiled, then the shared submission.
 */
import { limits, renderLimits } from "../../config";
import { compileOutputSchema } from "../../output/validate";
import { compileTemplate } from "../../template/jinja";
import { baseSpec, boundedMaxTokens, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { newId } from "../../lib/ids";
import type { CallSpec } from "../../engine/types";
import { entries, type ReduceJobSpec } from "./plan";
import type { ReduceRequest } from "./schema";

type TaskRequest = ReduceRequest["reduction_task"];

function callSpec(env: Env, body: ReduceRequest, task: TaskRequest, field: string, required: string[]): CallSpec {
  compileTemplate(task.prompt_template, `${field}.prompt_template`, required, renderLimits(env), "template_missing_variable");
  const outputSchema = task.output_schema === undefined ? (null as Record<string, unknown> | null) : (task.output_schema ?? null);
  if (outputSchema) compileOutputSchema(outputSchema);
  return {
    model: task.model ?? body.model,
    systemPrompt: task.system_prompt === undefined ? (body.system_prompt ?? null) : task.system_prompt,
    promptTemplate: task.prompt_template,
    templateField: `${field}.prompt_template`,
    outputSchema,
    temperature: task.temperature === undefined ? (body.temperature ?? null) : task.temperature,
    maxTokens: boundedMaxTokens(task.max_tokens === undefined ? body.max_tokens : task.max_tokens, body),
    timeoutMs: Math.round(body.timeout_secs * 1000),
    retryGuidance: body.retry_guidance,
    maxOutputBytes: limits(env).maxOutputBytes,
  };
}

export async function submitReduceJob(env: Env, tenantId: string, body: ReduceRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body, undefined, ["inner_task", "reduction_task"]);
  const list = entries(body.inputs);
  const spec: ReduceJobSpec = {
    ...baseSpec(newId("job"), tenantId, body),
    type: "reduce",
    inner: body.inner_task ? callSpec(env, body, body.inner_task, "inner_task", ["item"]) : null,
    reduction: callSpec(env, body, body.reduction_task, "reduction_task", ["accumulator", "current_result"]),
    initialValue: body.initial_value ?? null,
    total: list.length,
  };
  return submitJob(env, tenantId, { spec, body, inputs: list, values: list.map((e) => e.value) }, idempotencyKey, dryRun);
}
