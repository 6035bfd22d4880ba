/**
 * Submission of a job, for every operator: every check runs before anything is stored or started,
 * so bad input leaves no trace. The operator's own checks have built its spec; here the shared
 * ones run (sizes, webhook, every model and its credential), then the estimate (`?dry_run=true`
 * answers with it; a `token_budget` it does not fit is 422), idempotency, the job row, and the
 * hand-over to the coordinator. The caller gets the id at once (fan-out starts from the alarm).
 */
import { encryptionKey, limits, renderLimits } from "../config";
import { rateLimitOf } from "../engine/pacing";
import { deleteJob, findJobByIdempotencyKey, insertJob, type JobRow } from "../db/jobs";
import { seal, sha256Hex } from "../lib/crypto";
import { ApiError, type FieldIssue } from "../lib/errors";
import { canonicalJson } from "../lib/canonical-json";
import { endpointData, endpointFrom, endpointProblem } from "../llm/call-model";
import type { Provider } from "../llm/models";
import type { EndpointData } from "../llm/types";
import { parseModel } from "../llm/models";
import { webhookUrlProblem } from "../webhooks/policy";
import { secretProblem } from "../webhooks/signing";
import { budgetSuggestions, taskEstimates, usdSuggestions, type Estimate } from "../engine/estimate-job";
import { summarize } from "../engine/estimate-cost";
import { priceOf } from "../llm/prices";
import { hasFlexTier } from "../engine/execution";
import { lifecycleOf, type ModelWarning } from "../llm/lifecycle";
import { listedShutdowns } from "../llm/listed-shutdowns";
import { newTrace } from "../engine/tracing";
import { currentTraceparent } from "./trace-context";
import { batchApiOf } from "../llm/batch/registry";
import { executionSpec } from "../operators/execution-field";
import { cachedTasks } from "../cache/estimate";
import { DEFAULT_MAX_WAIT_SECS } from "../engine/limits";
import type { JobSpecBase, Operator } from "../engine/types";
import type { CommonJobRequest } from "../operators/base-fields";
import { jobCoordinator } from "../objects";

const ACTIVE_JOBS_RETRY_AFTER_SECS = 10;

export type Submission = { created: true; job: { id: string; total: number; warnings: ModelWarning[] } } | { created: false; job: JobRow };
export type SubmitAnswer = Submission | { dryRun: Estimate };

function checkSizes(env: Env, values: unknown[]): void {
  const { maxItemsPerJob, maxItemBytes } = limits(env);
  if (values.length > maxItemsPerJob) {
    throw new ApiError(413, "payload_too_large", `A job takes at most ${maxItemsPerJob} items; got ${values.length}.`, {
      details: [{ path: "inputs", message: `at most ${maxItemsPerJob} items` }],
    });
  }
  const oversized: FieldIssue[] = [];
  const encoder = new TextEncoder();
  values.forEach((input, i) => {
    const json = JSON.stringify(input) ?? "null";
    // A UTF-16 code unit is at most 3 bytes of UTF-8: most items need no encoding to be counted.
    if (json.length * 3 <= maxItemBytes) return;
    const bytes = encoder.encode(json).byteLength;
    if (bytes > maxItemBytes && oversized.length < 20) {
      oversized.push({ path: `inputs[${i}]`, message: `${bytes} bytes; at most ${maxItemBytes}` });
    }
  });
  if (oversized.length > 0) {
    throw new ApiError(413, "payload_too_large", `Each item may be at most ${maxItemBytes} bytes as JSON.`, {
      details: oversized,
    });
  }
}

export function checkWebhook(env: Env, webhook: { url: string; secret?: string } | null | undefined): void {
  if (!webhook) return;
  const issues: FieldIssue[] = [];
  const urlProblem = webhookUrlProblem(env, webhook.url);
  if (urlProblem) issues.push({ path: "webhook.url", message: urlProblem });
  const secret = webhook.secret === undefined ? null : secretProblem(webhook.secret);
  if (secret) issues.push({ path: "webhook.secret", message: secret });
  if (issues.length > 0) throw new ApiError(400, "invalid_request", "The webhook is not usable.", { details: issues });
}

/** The spec fields every operator shares, from the request fields every operator shares. */
/** The job fields of a spec, as every operator's submission makes them (./baseSpec). */
export type JobBase = ReturnType<typeof baseSpec>;

export function baseSpec(jobId: string, tenantId: string, body: CommonJobRequest) {
  return {
    jobId,
    tenantId,
    model: body.model,
    maxRetries: body.max_retries,
    maxWaitMs: (body.max_wait_secs ?? DEFAULT_MAX_WAIT_SECS) * 1000,
    rateLimit: body.rate_limit ? rateLimitOf(body.rate_limit) : null,
    concurrency: body.concurrency,
    webhook: body.webhook ? { url: body.webhook.url } : null, // the secret stays sealed in D1
    budget: body.token_budget
      ? { total: body.token_budget.total ?? null, usd: body.token_budget.usd ?? null, onExhausted: body.token_budget.on_exhausted }
      : null,
    execution: executionSpec(body),
    fallbacks: body.fallbacks ?? [],
  };
}

/** Every model the spec calls (the job's, and each call's or agent's own), and each call's own fallback chain. */
function modelsOf(spec: JobSpecBase): { called: Set<string>; chains: { model: string; fallbacks: string[] }[] } {
  const called = new Set<string>([spec.model]);
  const chains: { model: string; fallbacks: string[] }[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (typeof value !== "object" || value === null) return;
    const record = value as Record<string, unknown>;
    if ("promptTemplate" in record && typeof record.model === "string") {
      called.add(record.model);
      if (Array.isArray(record.fallbacks) && record.fallbacks.length > 0) chains.push({ model: record.model, fallbacks: record.fallbacks as string[] });
    }
    Object.values(record).forEach(walk);
  };
  walk(spec);
  return { called, chains };
}

/** A submission's provider endpoints, each read (D1, its key unsealed) once however many of its models the job calls. */
type Endpoints = (provider: Provider) => Promise<EndpointData | null>;

function endpointsOf(env: Env, tenantId: string): Endpoints {
  const read = new Map<Provider, Promise<EndpointData | null>>();
  return (provider) => {
    let endpoint = read.get(provider);
    if (!endpoint) read.set(provider, (endpoint = endpointData(env, tenantId, provider)));
    return endpoint;
  };
}

/**
 * A model past its provider's shutdown is refused (400 `model_retired`, with the replacement the
 * provider recommends); one that shuts down within 30 days or before the job's deadline is a warning.
 */
async function lifecycleWarnings(env: Env, endpoints: Endpoints, spec: JobSpecBase, models: Set<string>, now: number): Promise<ModelWarning[]> {
  const deadline = spec.execution ? now + spec.execution.deadlineSecs * 1000 : null;
  const listed = [...models].some((m) => parseModel(m).provider === "openai") ? await listedShutdowns(env, await endpoints("openai"), now) : null;
  const warnings: ModelWarning[] = [];
  for (const model of models) {
    const life = lifecycleOf(env, model, now, deadline, listed);
    if (!life) continue;
    const { shutdown_date, replacement } = life.retirement;
    if (life.state === "retiring") {
      warnings.push({ code: "model_retiring", model, shutdown_date, replacement });
      continue;
    }
    const instead = replacement ? `; its provider recommends ${replacement}` : "";
    throw new ApiError(400, "model_retired", `${model} was shut down by its provider on ${shutdown_date}${instead}.`, {
      details: { model, shutdown_date, replacement },
    });
  }
  return warnings;
}

/**
 * Fallbacks differ from their model and from each other, and need call stages (an agent's session
 * calls its one model); a call's own chain (a step's or a task's) is held to the same.
 */
function checkFallbacks(spec: JobSpecBase, op: { callWorkers?: boolean }, chains: { model: string; fallbacks: string[] }[]): void {
  const issues: FieldIssue[] = [];
  const chain = (model: string, fallbacks: string[], whose: string) =>
    fallbacks.forEach((fallback, i) => {
      if (fallback === model) issues.push({ path: `fallbacks[${i}]`, message: `${whose}: is its model itself` });
      else if (fallbacks.indexOf(fallback) !== i)
        issues.push({ path: `fallbacks[${i}]`, message: `${whose}: repeats fallbacks[${fallbacks.indexOf(fallback)}]` });
    });
  const fallbacks = spec.fallbacks ?? [];
  if (fallbacks.length > 0 && op.callWorkers === false) {
    issues.push({ path: "fallbacks", message: "an agent's sub-session calls its one model: fallbacks apply to call stages only" });
  }
  chain(spec.model, fallbacks, "the job's");
  for (const own of chains) chain(own.model, own.fallbacks, `a call's own, on ${own.model}`);
  if (issues.length > 0) throw new ApiError(400, "invalid_request", "The job's fallbacks cannot be used.", { details: issues });
}

/**
 * `batch` needs a provider with a batch API for every model its batches call; `auto` runs realtime
 * where one has none; `flex` needs OpenAI's flex tier for every model of the job, fallbacks included
 * (a flex call that falls back stays on flex).
 */
function checkExecution(spec: JobSpecBase, called: Set<string>, models: Set<string>): void {
  if (!spec.execution) return;
  if (spec.execution.mode === "flex") {
    const lacking = [...models].filter((m) => !hasFlexTier(m));
    if (lacking.length === 0) return;
    const message = `${lacking.join(", ")} has no flex tier (OpenAI's models have one): use mode "realtime", "batch" or "auto"`;
    throw new ApiError(400, "unsupported_execution_mode", `The job cannot run in flex mode: ${message}.`, { details: [{ path: "execution.mode", message }] });
  }
  const lacking = [...called].filter((m) => !batchApiOf(parseModel(m).provider));
  if (lacking.length === 0) return;
  if (spec.execution.mode === "auto") {
    spec.execution = null;
    return;
  }
  const message = `${lacking.join(", ")} has no batch API (OpenAI and Anthropic have one): use mode "realtime", or "auto", which runs such models realtime`;
  throw new ApiError(400, "unsupported_execution_mode", `The job cannot run in batch mode: ${message}.`, { details: [{ path: "execution.mode", message }] });
}

export interface Prepared<S extends JobSpecBase> {
  spec: S;
  operator: Operator<S>; // the submitting operator's plan
  body: CommonJobRequest;
  inputs: unknown[]; // what the operator's plan takes
  values: unknown[]; // the input values, for the size limits
  /** An evaluation's: the job it evaluates (whose view lists it). */
  evaluates?: string;
}

/** `jobs.request_hash` of a job submitted without an Idempotency-Key: nothing is ever compared with it. */
const NO_REQUEST_HASH = "";

/**
 * The checks every operator shares, then the estimate, idempotency, the job row, and the hand-over
 * to the coordinator. Operator-specific checks run before this (they build `prepared`).
 */
export async function submitJob<S extends JobSpecBase>(
  env: Env,
  tenantId: string,
  prepared: Prepared<S>,
  idempotencyKey: string | null,
  dryRun: boolean,
): Promise<SubmitAnswer> {
  const { spec, body } = prepared;
  checkSizes(env, prepared.values);
  checkWebhook(env, body.webhook);
  const { called, chains } = modelsOf(spec); // every model the job calls, walked once
  checkFallbacks(spec, prepared.operator, chains);
  // A fallback needs its credential, and must not be retired, as much as the model.
  const models = new Set([...called, ...(spec.fallbacks ?? []), ...chains.flatMap((c) => c.fallbacks)]);
  const endpoints = endpointsOf(env, tenantId);
  const warnings = await lifecycleWarnings(env, endpoints, spec, models, Date.now());
  const baseUrls = new Map<string, string | null>();
  for (const name of models) {
    const model = parseModel(name);
    const endpoint = endpointFrom(env, await endpoints(model.provider));
    const problem = endpointProblem(model.provider, endpoint, env);
    if (problem) throw new ApiError(400, "invalid_request", problem, { details: [{ path: "model", message: problem }] });
    baseUrls.set(name, endpoint?.baseUrl ?? null);
    if (spec.budget?.usd != null && !priceOf(env, name)) {
      const message = `${name} has no price, so a dollar budget cannot be kept: set token_budget.total instead, or give the model a price in the deployment's PRICES`;
      throw new ApiError(400, "invalid_request", `The job's token_budget.usd cannot be enforced: ${message}.`, {
        details: [{ path: "token_budget.usd", message }],
      });
    }
  }
  checkExecution(spec, called, models); // a batch line keeps its one model: fallbacks take realtime calls only
  const op = prepared.operator;
  const plan = op.plan(spec, prepared.inputs);
  if (dryRun || spec.budget) {
    const tasks = taskEstimates(op, spec, plan, renderLimits(env));
    const cached = body.cache ? await cachedTasks(env.DB, tenantId, tasks.tasks, (model) => baseUrls.get(model) ?? null) : undefined;
    const estimate = summarize(tasks, cached, (model) => priceOf(env, model));
    // A dry run runs every check a submission runs, the budget's too: over it, the same 422.
    const total = spec.budget?.total ?? null;
    if (total !== null && estimate.total_tokens > total) {
      throw new ApiError(422, "token_budget_exceeded", `The job's estimate (${estimate.total_tokens} tokens) is over its token_budget.total (${total}).`, {
        details: { estimate, budget: total, suggestions: budgetSuggestions(estimate, total) },
      });
    }
    const usd = spec.budget?.usd ?? null;
    // A batch or flex job is billed at the batch price; auto may run any item on the standard tier. The bound, as the budget reserves it.
    const mode = spec.execution?.mode;
    const cost = mode === "batch" || mode === "flex" ? estimate.cost_usd_max_by_mode.batch : estimate.cost_usd_max;
    if (usd !== null && cost !== null && cost > usd) {
      throw new ApiError(422, "token_budget_exceeded", `The job's estimate ($${cost}) is over its token_budget.usd ($${usd}).`, {
        details: { estimate, budget_usd: usd, suggestions: usdSuggestions(estimate, usd) },
      });
    }
    if (dryRun) return { dryRun: estimate };
  }

  // Only a retry with the same Idempotency-Key compares bodies: a job without a key stores no hash
  // (hashing the canonical form of a 10,000-item body costs ~15 ms of CPU).
  const requestHash = idempotencyKey ? await sha256Hex(canonicalJson({ type: spec.type, body })) : NO_REQUEST_HASH;
  if (idempotencyKey) {
    const existing = await findJobByIdempotencyKey(env.DB, tenantId, idempotencyKey);
    if (existing) return replay(existing, requestHash);
  }

  const total = plan.stages.reduce((n, s) => n + s.total, 0);
  const inserted = await insertJob(
    env.DB,
    {
      id: spec.jobId,
      tenantId,
      type: spec.type,
      model: body.model,
      total,
      mainStage: op.mainStage(spec),
      metadata: body.metadata,
      name: body.name ?? null,
      warnings,
      evaluates: prepared.evaluates ?? null,
      idempotencyKey,
      requestHash,
      webhookUrl: body.webhook?.url ?? null,
      webhookSecretEnc: body.webhook?.secret ? await seal(body.webhook.secret, encryptionKey(env)) : null,
    },
    new Date(),
    limits(env).maxActiveJobs,
  );
  if (!inserted) {
    // A concurrent request with the same key won the race, or the tenant is at its limit.
    const existing = idempotencyKey ? await findJobByIdempotencyKey(env.DB, tenantId, idempotencyKey) : null;
    if (existing) return replay(existing, requestHash);
    const { maxActiveJobs } = limits(env);
    throw new ApiError(429, "rate_limited", `This tenant already has ${maxActiveJobs} jobs queued or running; retry when one ends.`, {
      headers: { "retry-after": String(ACTIVE_JOBS_RETRY_AFTER_SECS) },
    });
  }
  spec.trace = newTrace(currentTraceparent()); // the submitting request's trace, else its own (src/engine/tracing.ts)
  try {
    await jobCoordinator(env, spec.jobId).start(spec, prepared.inputs);
  } catch (err) {
    await deleteJob(env.DB, spec.jobId); // the job never started: leave nothing behind
    throw err;
  }
  return { created: true, job: { id: spec.jobId, total, warnings } };
}

function replay(existing: JobRow, requestHash: string): Submission {
  if (existing.request_hash !== requestHash) {
    throw new ApiError(422, "idempotency_mismatch", "This Idempotency-Key was used with a different request body.");
  }
  return { created: false, job: existing };
}

/** The job's SSE stream from its coordinator: every event after `lastEventId` (0: from the start), then live. */
export async function openEventStream(env: Env, jobId: string, lastEventId = "0"): Promise<Response> {
  const request = new Request("https://coordinator/events", { headers: { "last-event-id": lastEventId } });
  return (await jobCoordinator(env, jobId).fetch(request)) as unknown as Response;
}
