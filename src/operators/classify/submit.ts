/** POST /v1/classify submissions: the template checked (it must read `item`), the labels made the answer's schema, then the shared submission. */
import { baseSpec, submitJob, type JobBase, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { newId } from "../../lib/ids";
import { invalidRequest } from "../../lib/errors";
import { itemCall } from "../task-call";
import { cascadeTarget, DEFAULT_ACCEPT_ABOVE, scoresByLogprobs, cascadeFallbacks } from "../cascade-field";
import { classifyOperator, type ClassifyJobSpec } from "./plan";
import { classifyInstruction, DEFAULT_CLASSIFY_TEMPLATE, labelSchema, type ClassifyRequest } from "./schema";

/** The classifier's spec from its request's fields (also a pipeline step's, with the pipeline's job fields in `base`). */
export function classifySpec(env: Env, body: ClassifyRequest, base: JobBase): ClassifyJobSpec {
  if (body.cascade?.reject_below !== undefined) {
    throw invalidRequest("cascade.reject_below is the filter's: a label is the cheaper model's or the job's model's, never rejected.", [
      { path: "cascade.reject_below", message: "not used by classify" },
    ]);
  }
  if (body.cascade?.score === "logprobs" && body.multi_label) {
    throw invalidRequest('A multi-label answer has no one label its tokens score: use score "self_reported".', [
      { path: "cascade.score", message: "not with multi_label" },
    ]);
  }
  const labels = body.categories.map((c) => c.name);
  const instruction = classifyInstruction(body.categories, body.multi_label);
  const call = (model?: string) =>
    itemCall(env, body, {
      template: body.prompt_template ?? DEFAULT_CLASSIFY_TEMPLATE,
      field: "prompt_template",
      instruction,
      outputSchema: labelSchema(labels, body.multi_label),
      model,
    });
  const target = body.cascade ? cascadeTarget(body.cascade, ["accuracy"]) : null;
  // A multi-label answer has no one label whose tokens score it: its confidence is the one it states.
  const scored = body.cascade && !body.multi_label && scoresByLogprobs(body.cascade) ? { logprobScore: "label" as const } : {};
  const cascade = body.cascade
    ? {
        call: { ...call(body.cascade.model), ...scored, ...cascadeFallbacks(body.cascade) },
        acceptAbove: target ? null : (body.cascade.accept_above ?? DEFAULT_ACCEPT_ABOVE),
        rejectBelow: null,
        target,
      }
    : null;
  return { ...base, type: "classify", labels, multiLabel: body.multi_label, call: call(), cascade };
}

export async function submitClassifyJob(
  env: Env,
  tenantId: string,
  body: ClassifyRequest,
  idempotencyKey: string | null,
  dryRun = false,
): Promise<SubmitAnswer> {
  checkFieldCaps(body); // before any parsing: a 20 MB template costs nothing to refuse
  const spec = classifySpec(env, body, baseSpec(newId("job"), tenantId, body));
  return submitJob(env, tenantId, { spec, operator: classifyOperator, body, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
