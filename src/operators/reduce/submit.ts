/**
 * POST /v1/reduce submissions: both templates checked for their variables (400
 * `template_missing_variable` naming the one missing), schemas compiled, then the shared submission.
 */
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { newId } from "../../lib/ids";
import { taskCall } from "../task-call";
import { entries, reduceOperator, type ReduceJobSpec } from "./plan";
import type { ReduceRequest } from "./schema";

export async function submitReduceJob(env: Env, tenantId: string, body: ReduceRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body, undefined, ["inner_task", "reduction_task"]);
  const list = entries(body.inputs);
  const spec: ReduceJobSpec = {
    ...baseSpec(newId("job"), tenantId, body),
    type: "reduce",
    inner: body.inner_task ? taskCall(env, body, body.inner_task, "inner_task", ["item"]) : null,
    reduction: taskCall(env, body, body.reduction_task, "reduction_task", ["accumulator", "current_result"]),
    initialValue: body.initial_value ?? null,
    total: list.length,
  };
  return submitJob(env, tenantId, { spec, operator: reduceOperator, body, inputs: list, values: list.map((e) => e.value) }, idempotencyKey, dryRun);
}
