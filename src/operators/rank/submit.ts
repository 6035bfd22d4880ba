/** POST /v1/rank submissions: `k` within the inputs, the templates checked, then the shared submission. */
import { baseSpec, submitJob, type JobBase, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { invalidRequest } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { itemCall } from "../task-call";
import { rankOperator, type RankJobSpec } from "./plan";
import {
  COMPARISON_SCHEMA,
  comparisonInstruction,
  DEFAULT_COMPARISON_TEMPLATE,
  DEFAULT_RANK_TEMPLATE,
  SCORE_SCHEMA,
  scoreInstruction,
  type RankRequest,
} from "./schema";

export async function submitRankJob(env: Env, tenantId: string, body: RankRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body); // before any parsing: a 20 MB template costs nothing to refuse
  if (body.k > body.inputs.length)
    throw invalidRequest(`k (${body.k}) is more than the ${body.inputs.length} inputs.`, [{ path: "k", message: `at most ${body.inputs.length}` }]);
  const spec = rankSpec(env, body, baseSpec(newId("job"), tenantId, body));
  return submitJob(env, tenantId, { spec, operator: rankOperator, body, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}

/** The ranking's spec from its request's fields (also a pipeline step's, with the pipeline's job fields in `base`). */
export function rankSpec(env: Env, body: Omit<RankRequest, "inputs">, base: JobBase): RankJobSpec {
  return {
    ...base,
    type: "rank",
    k: body.k,
    call: itemCall(env, body, {
      template: body.prompt_template ?? DEFAULT_RANK_TEMPLATE,
      field: "prompt_template",
      instruction: scoreInstruction(body.criteria),
      outputSchema: SCORE_SCHEMA,
    }),
    compare: itemCall(env, body, {
      template: body.comparison_template ?? DEFAULT_COMPARISON_TEMPLATE,
      field: "comparison_template",
      instruction: comparisonInstruction(body.criteria),
      outputSchema: COMPARISON_SCHEMA,
      reads: ["item_a", "item_b"],
    }),
  };
}
