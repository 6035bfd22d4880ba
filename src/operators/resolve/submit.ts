/**
 * POST /v1/resolve submissions: the templates checked, the blocking's pairs counted (422
 * `too_many_comparisons` over `max_comparisons`, with the count and a suggestion, before anything
 * is stored), then the shared submission.
 */
import { baseSpec, submitJob, type JobBase, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { ApiError, invalidRequest } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { PROTOTYPE_NAMES } from "../../lib/records";
import { itemCall } from "../task-call";
import { checkEmbeddingBlocking, embeddingBlocking } from "../embedding-blocking/submit";
import { blockPairs, MAX_TRIGRAM_KEY_CHARS, MAX_TRIGRAM_WORK, MAX_TRIGRAMS, type Blocking } from "./blocking";
import { resolveOperator, type ResolveJobSpec } from "./plan";
import { MATCH_INSTRUCTION, MATCH_SCHEMA, type ResolveRequest } from "./schema";

/** A request's key blocking as the engine takes it (resolve's, a join's): its keys field paths, its threshold the method's. */
export function blockingOf(blocking: ResolveRequest["blocking"]): Blocking {
  const { method, threshold } = blocking;
  if (!blocking.keys && method !== "embedding")
    throw invalidRequest(`A ${method} blocking compares keys: it needs blocking.keys.`, [
      { path: "blocking.keys", message: "required but for method embedding" },
    ]);
  const keys = blocking.keys ?? [];
  for (const field of ["model", "top_k", "dimensions"] as const) {
    if (method !== "embedding" && blocking[field] !== undefined)
      throw invalidRequest(`blocking.${field} is an embedding blocking's.`, [{ path: `blocking.${field}`, message: "only with method embedding" }]);
  }
  const issues = keys.flatMap((key, i) =>
    key.split(".").some((part) => PROTOTYPE_NAMES.has(part) || part === "")
      ? [{ path: `blocking.keys[${i}]`, message: "a field path: names joined by dots, none of them __proto__, constructor or prototype" }]
      : [],
  );
  if (issues.length > 0) throw invalidRequest("A blocking key is not a field path.", issues);
  if ((method === "trigram" || method === "embedding") && threshold !== undefined && threshold > 1)
    throw invalidRequest(`blocking.threshold of a ${method} blocking is ${method === "trigram" ? "an overlap" : "a cosine"} from 0 to 1.`, [
      { path: "blocking.threshold", message: "at most 1" },
    ]);
  if (method === "prefix" && threshold !== undefined && (!Number.isInteger(threshold) || threshold < 1))
    throw invalidRequest("blocking.threshold of a prefix blocking is a number of characters.", [
      { path: "blocking.threshold", message: "an integer, at least 1" },
    ]);
  return { keys, method, threshold: threshold ?? null };
}

/** The resolution's spec from its request's fields, for these records (also a pipeline step's, with the pipeline's job fields in `base`). */
export function resolveSpec(env: Env, body: Omit<ResolveRequest, "inputs">, base: JobBase): ResolveJobSpec {
  const blocking = blockingOf(body.blocking);
  const compare = itemCall(env, body, {
    template: body.comparison_template,
    field: "comparison_template",
    instruction: MATCH_INSTRUCTION,
    outputSchema: MATCH_SCHEMA,
    reads: ["item_a", "item_b"],
  });
  const resolution = body.resolution_template
    ? itemCall(env, body, { template: body.resolution_template, field: "resolution_template", outputSchema: body.output_schema ?? null, reads: ["items"] })
    : null;
  const neighbours = blocking.method === "embedding" ? embeddingBlocking(env, body, body.blocking, false) : null;
  return { ...base, type: "resolve", compare, resolution, blocking, maxComparisons: body.max_comparisons, neighbours };
}

/** 422 `too_many_comparisons` (with the count and a suggestion) when the blocking compares these records in more pairs than the spec allows. */
export function checkComparisons(spec: ResolveJobSpec, records: unknown[]): void {
  const { blocking, maxComparisons } = spec;
  if (spec.neighbours) return checkEmbeddingBlocking(spec.neighbours, records.length, records.length, maxComparisons, "inputs");
  const counted = blockPairs(records, blocking, maxComparisons);
  if (counted.trigrams !== undefined) {
    const suggestion = `block on shorter fields (a key counts its first ${MAX_TRIGRAM_KEY_CHARS.toLocaleString("en-US")} characters), or resolve fewer records per job`;
    throw new ApiError(
      422,
      "too_many_comparisons",
      `The trigram blocking's keys hold ${counted.trigrams.toLocaleString("en-US")} trigrams; at most ${MAX_TRIGRAMS.toLocaleString("en-US")} are indexed: ${suggestion}.`,
      {
        details: { comparisons: 0, complete: false, max_comparisons: maxComparisons, trigrams: counted.trigrams, max_trigrams: MAX_TRIGRAMS, suggestion },
      },
    );
  }
  if (counted.over && counted.work > MAX_TRIGRAM_WORK) {
    const suggestion =
      'raise blocking.threshold, or block on keys whose values share fewer trigrams (common words like "inc" make every record a candidate of every other)';
    throw new ApiError(
      422,
      "too_many_comparisons",
      `The trigram blocking looked at more than ${MAX_TRIGRAM_WORK.toLocaleString("en-US")} candidate pairs before it could count the comparisons: ${suggestion}.`,
      {
        details: { comparisons: counted.pairs.length, complete: false, max_comparisons: maxComparisons, candidates_checked: counted.work, suggestion },
      },
    );
  }
  if (counted.over) {
    const count = counted.pairs.length;
    const suggestion =
      blocking.method === "exact"
        ? "block on more keys, or raise max_comparisons"
        : blocking.method === "prefix"
          ? "use a longer prefix (blocking.threshold), block on more keys, or raise max_comparisons"
          : "raise blocking.threshold, block on more keys, or raise max_comparisons";
    throw new ApiError(
      422,
      "too_many_comparisons",
      `The blocking compares more than ${maxComparisons} pairs (at least ${count} found before counting stopped): ${suggestion}.`,
      {
        details: { comparisons: count, complete: false, max_comparisons: maxComparisons, suggestion },
      },
    );
  }
}

export async function submitResolveJob(env: Env, tenantId: string, body: ResolveRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body); // before any parsing: a 20 MB template costs nothing to refuse
  const spec = resolveSpec(env, body, baseSpec(newId("job"), tenantId, body));
  checkComparisons(spec, body.inputs);
  return submitJob(env, tenantId, { spec, operator: resolveOperator, body, inputs: body.inputs, values: body.inputs }, idempotencyKey, dryRun);
}
