/**
 * POST /v1/pipelines submissions: the pipeline's context settings and every step checked (./steps:
 * 400 with the exact path of each problem), then the shared submission. The pipeline's inputs are
 * the shared store's first names.
 */
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { capIssues, refuseOverCaps } from "../../jobs/field-caps";
import { InputError, type FieldIssue } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { pipelineOperator, type PipelineJobSpec } from "./plan";
import { readContext, readSteps } from "./steps";
import { IDENTIFIER_RULE, isIdentifier } from "./refs";
import { isRecord as isObject } from "../../lib/records";
import type { PipelineRequest } from "./schema";

/** Every template, schema and text field of every step (input tasks, inner and reduction tasks, nested steps) within its cap. */
function stepCapIssues(steps: unknown, prefix: string, depth = 0): FieldIssue[] {
  if (!Array.isArray(steps) || depth > 8) return [];
  return steps.flatMap((step, i) => {
    if (!isObject(step)) return [];
    const at = `${prefix}[${i}]`;
    const tasks = Object.entries(isObject(step.inputs) ? step.inputs : {}).flatMap(([name, v]) =>
      isObject(v) && isObject(v.task) ? capIssues(v.task, `${at}.inputs.${name}.task.`) : [],
    );
    const parts = ["inner_task", "reduction_task"].flatMap((k) => (isObject(step[k]) ? capIssues(step[k] as Record<string, unknown>, `${at}.${k}.`) : []));
    return [...capIssues(step, `${at}.`), ...tasks, ...parts, ...stepCapIssues(step.steps, `${at}.steps`, depth + 1)];
  });
}

export async function submitPipelineJob(
  env: Env,
  tenantId: string,
  body: PipelineRequest,
  idempotencyKey: string | null,
  dryRun = false,
): Promise<SubmitAnswer> {
  refuseOverCaps([...capIssues(body), ...stepCapIssues(body.steps, "steps")]);
  const issues: FieldIssue[] = [];
  for (const name of Object.keys(body.inputs)) {
    if (!isIdentifier(name)) issues.push({ path: `inputs.${name}`, message: `an input name is ${IDENTIFIER_RULE}` });
  }
  const context = body.context_management ? readContext(body.context_management, "context_management", issues) : undefined;
  if (issues.length > 0) throw new InputError("invalid_request", `The pipeline is not valid: ${issues[0]?.path}: ${issues[0]?.message}`, issues);
  const units = readSteps(env, body, body.inputs, context, body.steps);
  const base = baseSpec(newId("job"), tenantId, body);
  const spec: PipelineJobSpec = {
    ...base,
    // The job runs batch stages when the pipeline or one of its llm steps asks for it; each llm step's own mode wins (plan.ts `batchable`).
    execution: base.execution ?? units.find((u) => u.execution && u.execution.mode !== "realtime")?.execution ?? null,
    executionDefault: base.execution,
    type: "pipeline",
    inputs: body.inputs,
    units,
    format: context?.accumulation_format ?? "notes_only",
  };
  return submitJob(env, tenantId, { spec, operator: pipelineOperator, body, inputs: [], values: Object.values(body.inputs) }, idempotencyKey, dryRun);
}
