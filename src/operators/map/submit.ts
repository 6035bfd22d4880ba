/** POST /v1/map submissions: the map operator's own checks and spec, then the shared submission. */
import type { MapRequest } from "../../schemas/map";
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { newId } from "../../lib/ids";
import { itemCall } from "../task-call";
import { mapOperator, type MapJobSpec } from "./plan";

export async function submitMapJob(env: Env, tenantId: string, body: MapRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body); // before any parsing: a 20 MB template costs nothing to refuse
  const spec: MapJobSpec = {
    ...baseSpec(newId("job"), tenantId, body),
    type: "map",
    call: itemCall(env, body, { template: body.prompt_template, field: "prompt_template", outputSchema: body.output_schema ?? null }),
  };
  return submitJob(env, tenantId, { spec, operator: mapOperator, body, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
