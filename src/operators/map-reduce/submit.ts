/**
 * POST /v1/map-reduce submissions: each template checked for its variables (400
 * `template_missing_variable`), schemas compiled, then the shared submission.
 */
import { limits, renderLimits } from "../../config";
import { compileOutputSchema } from "../../output/validate";
import { compileTemplate } from "../../template/jinja";
import { baseSpec, boundedMaxTokens, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { InputError } from "../../lib/errors";
import { newId } from "../../lib/ids";
import type { CallSpec } from "../../engine/types";
import type { MapReduceJobSpec } from "./plan";
import { DEFAULT_ALLOCATION, type MapReduceRequest } from "./schema";

type TaskRequest = MapReduceRequest["reducer"];

function callSpec(env: Env, body: MapReduceRequest, task: TaskRequest, field: string, required: string[]): CallSpec {
  compileTemplate(task.prompt_template, `${field}.prompt_template`, required, renderLimits(env), "template_missing_variable");
  const outputSchema = task.output_schema ?? null;
  if (outputSchema) compileOutputSchema(outputSchema);
  return {
    model: task.model ?? body.model,
    systemPrompt: task.system_prompt === undefined ? (body.system_prompt ?? null) : task.system_prompt,
    promptTemplate: task.prompt_template,
    templateField: `${field}.prompt_template`,
    outputSchema,
    temperature: task.temperature === undefined ? (body.temperature ?? null) : task.temperature,
    maxTokens: boundedMaxTokens(task.max_tokens === undefined ? body.max_tokens : task.max_tokens, { ...body, concurrency: body.max_parallel_mappers }),
    timeoutMs: Math.round(body.timeout_secs * 1000),
    retryGuidance: body.retry_guidance,
    maxOutputBytes: limits(env).maxOutputBytes,
  };
}

/** The mapper must read `items`; with one document per mapper, `item` will do. */
function mapperVariables(env: Env, body: MapReduceRequest): string[] {
  if (body.docs_per_mapper !== 1) return ["items"];
  try {
    compileTemplate(body.mapper.prompt_template, "mapper.prompt_template", ["item"], renderLimits(env), "template_missing_variable");
    return ["item"];
  } catch (err) {
    if (err instanceof InputError && err.code === "template_missing_variable") return ["items"];
    throw err;
  }
}

export async function submitMapReduceJob(env: Env, tenantId: string, body: MapReduceRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body, undefined, ["mapper", "reducer", "synthesis"]);
  const spec: MapReduceJobSpec = {
    ...baseSpec(newId("job"), tenantId, { ...body, concurrency: body.max_parallel_mappers }),
    type: "map_reduce",
    mapper: { ...callSpec(env, body, body.mapper, "mapper", mapperVariables(env, body)), shape: "extractions" },
    reducer: callSpec(env, body, body.reducer, "reducer", ["items"]),
    synthesis: body.synthesis ? callSpec(env, body, body.synthesis, "synthesis", ["results"]) : null,
    documents: body.inputs.length,
    docsPerMapper: body.docs_per_mapper,
    strategy: body.reduction_strategy,
    fanIn: body.fan_in,
    shuffle: {
      key: body.shuffle.key,
      dedupe: body.shuffle.dedupe,
      dedupeFields: body.shuffle.dedupe_fields ?? null,
      conflict: body.shuffle.conflict,
    },
    mapFailures: body.map_failures,
  };
  if (spec.budget && body.token_budget) spec.budget.allocation = body.token_budget.allocation ?? DEFAULT_ALLOCATION;
  return submitJob(env, tenantId, { spec, body: { ...body, concurrency: body.max_parallel_mappers }, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
