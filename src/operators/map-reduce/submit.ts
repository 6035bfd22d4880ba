/**
 * POST /v1/map-reduce submissions: each template checked for its variables (400
 * `template_missing_variable`), schemas compiled, then the shared submission.
 */
import { renderLimits } from "../../config";
import { compileTemplate } from "../../template/jinja";
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { InputError, invalidRequest } from "../../lib/errors";
import { isRecord } from "../../lib/records";
import { newId } from "../../lib/ids";
import { taskCall } from "../task-call";
import { mapReduceOperator, type MapReduceJobSpec } from "./plan";
import { DEFAULT_ALLOCATION, type MapReduceRequest } from "./schema";

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

/** The fields the mapper's output_schema gives one extraction (a list's `items`, or `extractions.items`), when it names them. */
function extractionFields(schema: unknown): Set<string> | null {
  if (!isRecord(schema)) return null;
  const list = schema.type === "array" ? schema : isRecord(schema.properties) && isRecord(schema.properties.extractions) ? schema.properties.extractions : null;
  const item = isRecord(list) ? list.items : null;
  return isRecord(item) && isRecord(item.properties) ? new Set(Object.keys(item.properties)) : null;
}

/** A dedupe field the mapper's schema does not name would merge distinct extractions (a typo): 400. */
function checkDedupeFields(body: MapReduceRequest): void {
  const fields = extractionFields(body.mapper.output_schema);
  if (!fields || !body.shuffle.dedupe_fields) return;
  const details = body.shuffle.dedupe_fields
    .map((field, i) => ({ field, i }))
    .filter(({ field }) => !fields.has(field.split(".")[0] as string))
    .map(({ field, i }) => ({
      path: `shuffle.dedupe_fields.${i}`,
      message: `the mapper's output_schema names no field \`${field.split(".")[0]}\` (it names ${[...fields].map((f) => `\`${f}\``).join(", ") || "none"})`,
    }));
  if (details.length > 0)
    throw invalidRequest(`The shuffle's dedupe_fields name fields the mapper's output_schema does not have: ${details[0]?.message}`, details);
}

export async function submitMapReduceJob(
  env: Env,
  tenantId: string,
  body: MapReduceRequest,
  idempotencyKey: string | null,
  dryRun = false,
): Promise<SubmitAnswer> {
  checkFieldCaps(body, undefined, ["mapper", "reducer", "synthesis"]);
  checkDedupeFields(body);
  const defaults = { ...body, concurrency: body.max_parallel_mappers };
  const spec: MapReduceJobSpec = {
    ...baseSpec(newId("job"), tenantId, defaults),
    type: "map_reduce",
    mapper: { ...taskCall(env, defaults, body.mapper, "mapper", mapperVariables(env, body)), shape: "extractions" },
    reducer: taskCall(env, defaults, body.reducer, "reducer", ["items"]),
    synthesis: body.synthesis ? taskCall(env, defaults, body.synthesis, "synthesis", ["results"]) : null,
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
  return submitJob(env, tenantId, { spec, operator: mapReduceOperator, body: defaults, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
