/** POST /v1/map submissions: the map operator's own checks, then the shared submission. */
import { limits, renderLimits } from "../config";
import { compileOutputSchema } from "../output/validate";
import { compileTemplate } from "../template/jinja";
import type { MapRequest } from "../schemas/map";
import { commonSpec, submitJob, type Submission } from "./submit";
import { checkFieldCaps } from "./field-caps";

export async function submitMapJob(env: Env, tenantId: string, body: MapRequest, idempotencyKey: string | null): Promise<Submission> {
  checkFieldCaps(body); // before any parsing: a 20 MB template costs nothing to refuse
  compileTemplate(body.prompt_template, "prompt_template", "item", renderLimits(env));
  const outputSchema = body.output_schema ?? null;
  if (outputSchema) compileOutputSchema(outputSchema);
  return submitJob(env, tenantId, "map", body, idempotencyKey, (jobId) => ({
    ...commonSpec(jobId, tenantId, body),
    type: "map",
    promptTemplate: body.prompt_template,
    outputSchema,
    retryGuidance: body.retry_guidance,
    maxOutputBytes: limits(env).maxOutputBytes,
  }));
}
