/**
 * POST /v1/pipelines submissions: the pipeline's context settings and every step checked (./steps:
 * 400 with the exact path of each problem), then the shared submission. The pipeline's inputs are
 * the shared store's first names.
 */
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { InputError, type FieldIssue } from "../../lib/errors";
import { newId } from "../../lib/ids";
import type { PipelineJobSpec } from "./plan";
import { readContext, readSteps } from "./steps";
import type { PipelineRequest } from "./schema";

const IDENTIFIER = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export async function submitPipelineJob(env: Env, tenantId: string, body: PipelineRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  const issues: FieldIssue[] = [];
  for (const name of Object.keys(body.inputs)) {
    if (!IDENTIFIER.test(name)) issues.push({ path: `inputs.${name}`, message: "an input name is an identifier (letters, digits and _, not a digit first)" });
  }
  const context = body.context_management ? readContext(body.context_management, "context_management", issues) : undefined;
  if (issues.length > 0) throw new InputError("invalid_request", `The pipeline is not valid: ${issues[0]?.path}: ${issues[0]?.message}`, issues);
  const units = readSteps(env, body, body.inputs, context, body.steps);
  const spec: PipelineJobSpec = {
    ...baseSpec(newId("job"), tenantId, body),
    type: "pipeline",
    inputs: body.inputs,
    units,
    format: context?.accumulation_format ?? "notes_only",
  };
  return submitJob(env, tenantId, { spec, body, inputs: [], values: Object.values(body.inputs) }, idempotencyKey, dryRun);
}
