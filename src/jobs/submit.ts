/**
 * Submission of a job: every check runs before anything is stored or started, so bad input leaves
 * no trace. Then the job row is written, the coordinator is given the job, and the caller gets
 * the id at once (the coordinator starts fan-out from its alarm).
 */
import { encryptionKey, limits } from "../config";
import { deleteJob, findJobByIdempotencyKey, insertJob, type JobRow } from "../db/jobs";
import { seal, sha256Hex } from "../lib/crypto";
import { ApiError, type FieldIssue } from "../lib/errors";
import { newId } from "../lib/ids";
import { canonicalJson } from "../lib/canonical-json";
import { endpointProblem, resolveEndpoint } from "../llm/call-model";
import { parseModel } from "../llm/models";
import { webhookUrlProblem } from "../webhooks/policy";
import { secretProblem } from "../webhooks/signing";
import type { JobSpec } from "./spec";

const ACTIVE_JOBS_RETRY_AFTER_SECS = 10;

export type Submission = { created: true; job: { id: string; total: number } } | { created: false; job: JobRow };

function checkSizes(env: Env, inputs: unknown[]): void {
  const { maxItemsPerJob, maxItemBytes } = limits(env);
  if (inputs.length > maxItemsPerJob) {
    throw new ApiError(413, "payload_too_large", `A job takes at most ${maxItemsPerJob} items; got ${inputs.length}.`, {
      details: [{ path: "inputs", message: `at most ${maxItemsPerJob} items` }],
    });
  }
  const oversized: FieldIssue[] = [];
  inputs.forEach((input, i) => {
    const bytes = new TextEncoder().encode(JSON.stringify(input) ?? "null").byteLength;
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

export interface CommonJobRequest {
  inputs: unknown[];
  model: string;
  system_prompt?: string | null;
  temperature?: number | null;
  max_tokens?: number | null;
  timeout_secs: number;
  max_retries: number;
  concurrency: number;
  webhook?: { url: string; secret?: string } | null;
  metadata: Record<string, unknown>;
}

/** The spec fields every operator shares, from the request fields every operator shares. */
export function commonSpec(jobId: string, tenantId: string, body: CommonJobRequest) {
  return {
    jobId,
    tenantId,
    model: body.model,
    systemPrompt: body.system_prompt ?? null,
    temperature: body.temperature ?? null,
    maxTokens: body.max_tokens ?? null,
    timeoutMs: Math.round(body.timeout_secs * 1000),
    maxRetries: body.max_retries,
    concurrency: body.concurrency,
    webhook: body.webhook ? { url: body.webhook.url } : null, // the secret stays sealed in D1
  };
}

/**
 * The checks every operator shares (sizes, webhook, model and its credential), then idempotency,
 * the job row, and the hand-over to the coordinator. Operator-specific checks run before this.
 */
export async function submitJob(
  env: Env,
  tenantId: string,
  type: JobSpec["type"],
  body: CommonJobRequest,
  idempotencyKey: string | null,
  buildSpec: (jobId: string) => JobSpec,
): Promise<Submission> {
  checkSizes(env, body.inputs);
  checkWebhook(env, body.webhook);
  const model = parseModel(body.model);
  const problem = endpointProblem(model.provider, await resolveEndpoint(env, tenantId, model.provider), env);
  if (problem) throw new ApiError(400, "invalid_request", problem, { details: [{ path: "model", message: problem }] });

  const requestHash = await sha256Hex(canonicalJson({ type, body }));
  if (idempotencyKey) {
    const existing = await findJobByIdempotencyKey(env.DB, tenantId, idempotencyKey);
    if (existing) return replay(existing, requestHash);
  }

  const jobId = newId("job");
  const inserted = await insertJob(
    env.DB,
    {
      id: jobId,
      tenantId,
      type,
      model: body.model,
      total: body.inputs.length,
      metadata: body.metadata,
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
  try {
    await coordinatorFor(env, jobId).start(buildSpec(jobId), body.inputs);
  } catch (err) {
    await deleteJob(env.DB, jobId); // the job never started: leave nothing behind
    throw err;
  }
  return { created: true, job: { id: jobId, total: body.inputs.length } };
}

function replay(existing: JobRow, requestHash: string): Submission {
  if (existing.request_hash !== requestHash) {
    throw new ApiError(422, "idempotency_mismatch", "This Idempotency-Key was used with a different request body.");
  }
  return { created: false, job: existing };
}

export function coordinatorFor(env: Env, jobId: string) {
  return env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(jobId));
}

/** The job's SSE stream from its coordinator: every event after `lastEventId` (0: from the start), then live. */
export async function openEventStream(env: Env, jobId: string, lastEventId = "0"): Promise<Response> {
  const request = new Request("https://coordinator/events", { headers: { "last-event-id": lastEventId } });
  return (await coordinatorFor(env, jobId).fetch(request)) as unknown as Response;
}
