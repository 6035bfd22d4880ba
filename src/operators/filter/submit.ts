/** POST /v1/filter submissions: the predicate checked (it must read `item`), then the shared submission. */
import { limits, renderLimits } from "../../config";
import { compileTemplate } from "../../template/jinja";
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { newId } from "../../lib/ids";
import { boundedMaxTokens } from "../max-tokens";
import { filterOperator, type FilterJobSpec } from "./plan";
import { FILTER_INSTRUCTION, KEEP_SCHEMA, type FilterRequest } from "./schema";

export async function submitFilterJob(env: Env, tenantId: string, body: FilterRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body); // before any parsing: a 20 MB predicate costs nothing to refuse
  compileTemplate(body.predicate_template, "predicate_template", "item", renderLimits(env));
  const spec: FilterJobSpec = {
    ...baseSpec(newId("job"), tenantId, body),
    type: "filter",
    call: {
      model: body.model,
      systemPrompt: body.system_prompt ? `${FILTER_INSTRUCTION}\n\n${body.system_prompt}` : FILTER_INSTRUCTION,
      promptTemplate: body.predicate_template,
      templateField: "predicate_template",
      outputSchema: KEEP_SCHEMA,
      temperature: body.temperature ?? null,
      maxTokens: boundedMaxTokens(body.max_tokens, body),
      timeoutMs: Math.round(body.timeout_secs * 1000),
      retryGuidance: body.retry_guidance,
      maxOutputBytes: limits(env).maxOutputBytes,
      cacheTtlSecs: body.cache?.ttl_secs ?? null,
    },
  };
  return submitJob(env, tenantId, { spec, operator: filterOperator, body, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
