/** POST /v1/map submissions: the map operator's own checks and spec, then the shared submission. */
import { limits, renderLimits } from "../../config";
import { compileOutputSchema } from "../../output/validate";
import { compileTemplate } from "../../template/jinja";
import type { MapRequest } from "../../schemas/map";
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { boundedMaxTokens } from "../max-tokens";
import { checkFieldCaps } from "../../jobs/field-caps";
import { newId } from "../../lib/ids";
import { mapOperator, type MapJobSpec } from "./plan";

export async function submitMapJob(env: Env, tenantId: string, body: MapRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body); // before any parsing: a 20 MB template costs nothing to refuse
  compileTemplate(body.prompt_template, "prompt_template", "item", renderLimits(env));
  const outputSchema = body.output_schema ?? null;
  if (outputSchema) compileOutputSchema(outputSchema);
  const spec: MapJobSpec = {
    ...baseSpec(newId("job"), tenantId, body),
    type: "map",
    call: {
      model: body.model,
      systemPrompt: body.system_prompt ?? null,
      promptTemplate: body.prompt_template,
      templateField: "prompt_template",
      outputSchema,
      temperature: body.temperature ?? null,
      maxTokens: boundedMaxTokens(body.max_tokens, body),
      timeoutMs: Math.round(body.timeout_secs * 1000),
      retryGuidance: body.retry_guidance,
      maxOutputBytes: limits(env).maxOutputBytes,
      cacheTtlSecs: body.cache?.ttl_secs ?? null,
    },
  };
  return submitJob(env, tenantId, { spec, operator: mapOperator, body, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
