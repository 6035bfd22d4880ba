/** POST /v1/filter submissions: the predicate checked (it must read `item`), the cascade's thresholds, then the shared submission. */
import { baseSpec, submitJob, type JobBase, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { newId } from "../../lib/ids";
import { cascadeTarget, checkThresholds, DEFAULT_ACCEPT_ABOVE, scoresByLogprobs, cascadeFallbacks } from "../cascade-field";
import type { CallSpec } from "../../engine/types";
import { itemCall } from "../task-call";
import { filterOperator, type FilterJobSpec } from "./plan";
import type { CascadeSpec } from "../judge";
import { filterInstruction, keepSchema, type FilterRequest } from "./schema";

const DEFAULT_REJECT_BELOW = 0.1;

/** The filter's spec from its request's fields (also a pipeline step's, with the pipeline's job fields in `base`). */
export function filterSpec(env: Env, body: FilterRequest, base: JobBase): FilterJobSpec {
  const call = (withConfidence: boolean, model?: string) => {
    return itemCall(env, body, {
      template: body.predicate_template,
      field: "predicate_template",
      instruction: filterInstruction(withConfidence),
      outputSchema: keepSchema(withConfidence),
      model,
    });
  };
  const cascade = body.cascade ? yesNoCascade(body.cascade, call(true, body.cascade.model), "keep") : null;
  return { ...base, type: "filter", call: call(false), cascade };
}

/**
 * A yes-or-no judgement's cascade (a filter's `keep`, a join's `match`): the cheaper call (scored by
 * its answer's logprobs where asked, with its own fallbacks), with fixed thresholds or a target.
 */
export function yesNoCascade(cascade: NonNullable<FilterRequest["cascade"]>, call: CallSpec, field: "keep" | "match"): CascadeSpec {
  const target = cascadeTarget(cascade, ["accuracy", "precision", "recall"]);
  const acceptAbove = cascade.accept_above ?? DEFAULT_ACCEPT_ABOVE;
  const rejectBelow = cascade.reject_below ?? DEFAULT_REJECT_BELOW;
  if (!target) checkThresholds(acceptAbove, rejectBelow);
  const cheaper: CallSpec = { ...call, ...(scoresByLogprobs(cascade) ? { logprobScore: field } : {}), ...cascadeFallbacks(cascade) };
  return target ? { call: cheaper, acceptAbove: null, rejectBelow: null, target } : { call: cheaper, acceptAbove, rejectBelow };
}

export async function submitFilterJob(env: Env, tenantId: string, body: FilterRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body); // before any parsing: a 20 MB predicate costs nothing to refuse
  const spec = filterSpec(env, body, baseSpec(newId("job"), tenantId, body));
  return submitJob(env, tenantId, { spec, operator: filterOperator, body, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
