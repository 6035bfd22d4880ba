/**
 * POST /v1/evaluations submissions: the evaluated job (and the compared one) must be the tenant's
 * (else 404) and ended (else 409); the judge's sample is drawn from its stored results with the
 * seed, the gold indices must have results, and two compared jobs must have the same inputs
 * (else 400). The items are read once, here: the evaluation's inputs, so the evaluated job is
 * never read or changed again. Then the shared submission.
 */
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { getJob, type JobRow, type StoredResult } from "../../db/jobs";
import { resultIndices, resultsAt } from "../../db/result-rows";
import { ApiError, invalidRequest, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { canonicalJson } from "../../lib/canonical-json";
import { drawSample } from "../../engine/cascade-target";
import { isTerminal } from "../../engine/types";
import { itemCall } from "../task-call";
import { limits } from "../../config";
import { evaluationOperator, type EvaluationJobSpec } from "./plan";
import type { EvalItem } from "./summary";
import { COMPARE_TEMPLATE, compareInstruction, JUDGE_TEMPLATE, judgeInstruction, PREFERENCE_SCHEMA, verdictSchema, type EvaluationRequest } from "./schema";

/** An ended job of the tenant's (404 otherwise, 409 while it runs). */
async function endedJob(db: D1Database, tenantId: string, jobId: string, path: string): Promise<JobRow> {
  const job = await getJob(db, tenantId, jobId);
  if (!job) throw notFound("job");
  if (!isTerminal(job.status)) throw new ApiError(409, "conflict", `The job at ${path} is ${job.status}: evaluate it once it has ended.`);
  return job;
}

function checkShape(body: EvaluationRequest): void {
  if (!body.judge && !body.gold) throw invalidRequest("An evaluation needs a judge, gold labels, or both.", [{ path: "judge", message: "give judge or gold" }]);
  if (body.compare && !body.judge) throw invalidRequest("A comparison needs a judge to prefer one answer.", [{ path: "compare", message: "only with judge" }]);
  if (body.compare && body.gold)
    throw invalidRequest("Gold labels evaluate one job: compare two jobs without them.", [{ path: "gold", message: "not with compare" }]);
  const names = new Set<string>();
  body.judge?.criteria.forEach((c, i) => {
    if (names.has(c.name))
      throw invalidRequest(`Two criteria are named "${c.name}".`, [{ path: `judge.criteria[${i}].name`, message: "names must be unique" }]);
    names.add(c.name);
  });
  const seen = new Set<number>();
  body.gold?.forEach((g, i) => {
    if (seen.has(g.index)) throw invalidRequest(`Two gold labels for item ${g.index}.`, [{ path: `gold[${i}].index`, message: "indices must be unique" }]);
    seen.add(g.index);
  });
}

const resultItem = (r: StoredResult) => ({
  output: r.success ? (r.output ?? null) : null,
  success: r.success,
  error: typeof r.error === "string" ? r.error : null,
});

export async function submitEvaluationJob(
  env: Env,
  tenantId: string,
  body: EvaluationRequest,
  idempotencyKey: string | null,
  dryRun = false,
): Promise<SubmitAnswer> {
  checkFieldCaps(body);
  checkShape(body);
  const source = await endedJob(env.DB, tenantId, body.job_id, "job_id");
  const other = body.compare ? await endedJob(env.DB, tenantId, body.compare.job_id_b, "compare.job_id_b") : null;
  if (other && other.total !== source.total)
    throw invalidRequest(`The two jobs have ${source.total} and ${other.total} items: a comparison needs the same inputs.`, [
      { path: "compare.job_id_b", message: "not the same inputs" },
    ]);

  const indices = await resultIndices(env.DB, source.id, source.main_stage);
  const seed = body.sample.seed ?? Math.floor(Math.random() * 2 ** 31);
  const judged = body.judge ? drawSample(indices.length, body.sample.size, seed).map((p) => indices[p] as number) : [];
  const present = new Set(indices);
  body.gold?.forEach((g, i) => {
    if (!present.has(g.index))
      throw invalidRequest(`The evaluated job has no result for item ${g.index}.`, [{ path: `gold[${i}].index`, message: "no such result" }]);
  });
  const expected = new Map((body.gold ?? []).map((g) => [g.index, g.expected]));
  const wanted = [...new Set([...judged, ...expected.keys()])].sort((a, b) => a - b);
  const results = await resultsAt(env.DB, source.id, source.main_stage, wanted);
  const others = other ? await resultsAt(env.DB, other.id, other.main_stage, judged) : null;
  const judgedSet = new Set(judged);
  const items: EvalItem[] = wanted.map((index) => {
    const r = results.get(index) as StoredResult;
    const item: EvalItem = { index, input: r.input ?? null, ...resultItem(r), judged: judgedSet.has(index) };
    if (expected.has(index)) item.expected = expected.get(index);
    if (others) {
      const b = others.get(index);
      if (!b || canonicalJson(b.input ?? null) !== canonicalJson(item.input)) {
        throw invalidRequest(`Item ${index} has another input in job ${other?.id}: a comparison needs the same inputs.`, [
          { path: "compare.job_id_b", message: `item ${index} differs` },
        ]);
      }
      item.b = resultItem(b);
    }
    return item;
  });

  // The items go to the coordinator in one call, as a job's inputs do: at most the deployment's request size.
  const bytes = items.reduce((n, item) => n + JSON.stringify(item).length, 0);
  const { maxRequestBytes } = limits(env);
  if (bytes > maxRequestBytes) {
    throw new ApiError(
      413,
      "payload_too_large",
      `The evaluated items hold ${bytes} characters of JSON; at most ${maxRequestBytes}: take a smaller sample or fewer gold labels.`,
      {
        details: [{ path: body.gold ? "gold" : "sample.size", message: `${items.length} items, ${bytes} characters` }],
      },
    );
  }
  const model = body.judge?.model ?? source.model;
  const request = { ...body, model };
  const criteria = body.judge?.criteria ?? [];
  const call = (template: string, instruction: string, outputSchema: Record<string, unknown>) =>
    itemCall(env, request, { template, field: "judge", instruction, outputSchema, model });
  const spec: EvaluationJobSpec = {
    ...baseSpec(newId("job"), tenantId, request),
    type: "evaluation",
    evaluates: source.id,
    sourceType: source.type,
    compareWith: other?.id ?? null,
    criteria: criteria.map((c) => c.name),
    mode: body.compare ? "compare" : body.judge ? "judge" : "gold",
    call: body.compare
      ? call(COMPARE_TEMPLATE, compareInstruction(criteria), PREFERENCE_SCHEMA)
      : call(JUDGE_TEMPLATE, judgeInstruction(criteria), verdictSchema(criteria.map((c) => c.name))),
    confidence: body.confidence,
    seed,
  };
  return submitJob(
    env,
    tenantId,
    { spec, operator: evaluationOperator, body: request, inputs: items, values: items, evaluates: source.id },
    idempotencyKey,
    dryRun,
  );
}
