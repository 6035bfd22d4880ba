/** POST /v1/map submissions: the map operator's own checks, then the shared submission. */
import { limits } from "../config";
import { compileOutputSchema } from "../output/validate";
import { compileTemplate } from "../template/jinja";
import type { MapRequest } from "../schemas/map";
import { submitJob, type Submission } from "./submit";

export async function submitMapJob(env: Env, tenantId: string, body: MapRequest, idempotencyKey: string | null): Promise<Submission> {
  compileTemplate(body.prompt_template);
  const outputSchema = body.output_schema ?? null;
  if (outputSchema) compileOutputSchema(outputSchema);
  return submitJob(env, tenantId, "map", body, idempotencyKey, (jobId) => ({
    jobId,
    tenantId,
    type: "map",
    model: body.model,
    promptTemplate: body.prompt_template,
    outputSchema,
    systemPrompt: body.system_prompt ?? null,
    temperature: body.temperature ?? null,
    maxTokens: body.max_tokens ?? null,
    timeoutMs: Math.round(body.timeout_secs * 1000),
    maxRetries: body.max_retries,
    concurrency: body.concurrency,
    retryGuidance: body.retry_guidance,
    maxOutputBytes: limits(env).maxOutputBytes,
    webhook: body.webhook ? { url: body.webhook.url } : null, // the secret stays sealed in D1
  }));
}
