/** POST /v1/filter submissions: the predicate checked (it must read `item`), then the shared submission. */
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { newId } from "../../lib/ids";
import { itemCall } from "../task-call";
import { filterOperator, type FilterJobSpec } from "./plan";
import { FILTER_INSTRUCTION, KEEP_SCHEMA, type FilterRequest } from "./schema";

export async function submitFilterJob(env: Env, tenantId: string, body: FilterRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body); // before any parsing: a 20 MB predicate costs nothing to refuse
  const systemPrompt = body.system_prompt ? `${FILTER_INSTRUCTION}\n\n${body.system_prompt}` : FILTER_INSTRUCTION;
  const spec: FilterJobSpec = {
    ...baseSpec(newId("job"), tenantId, body),
    type: "filter",
    call: itemCall(env, body, { template: body.predicate_template, field: "predicate_template", systemPrompt, outputSchema: KEEP_SCHEMA }),
  };
  return submitJob(env, tenantId, { spec, operator: filterOperator, body, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
