/**
 * Driving a JobCoordinator at the Durable Object level: jobs are started through its RPC, its
 * alarm is run by hand, and the tests play the workers. Right after each dispatch the tokens of
 * running tasks are replaced with known ones, so the real workers' claims and reports are stale
 * and only the test's reports count. The real workers' model endpoint never answers
 * (model-tarpit.ts), so none of them reports before the takeover however loaded the machine.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import type { JobCoordinator } from "../../../durable-objects/job-coordinator";
import type { AttemptOutcome } from "../../../src/engine/retry-policy";
import type { CallSpec } from "../../../src/engine/types";
import type { JobSpec } from "../../../src/operators/registry";
import { tenantWithKey } from "../helpers";
import { providerLimiter, ratePacer } from "../../../src/objects";

export type Stub = DurableObjectStub<JobCoordinator>;
export type TaskRow = { stage: string; idx: number; state: string; attempts: number; input: string; token: string | null; reserved: number };

export const call = (over: Partial<CallSpec> = {}): CallSpec => ({
  model: "openai-compatible/m",
  promptTemplate: "{{ item }}",
  templateField: "prompt_template",
  outputSchema: null,
  systemPrompt: null,
  temperature: null,
  maxTokens: 10,
  timeoutMs: 60_000,
  retryGuidance: "retry",
  maxOutputBytes: 10_000,
  ...over,
});

export function base(jobId: string, tenantId: string) {
  return { jobId, tenantId, model: "openai-compatible/m", maxRetries: 1, concurrency: 4, webhook: null, budget: null };
}

/** A job row in D1 (unless `withRow` is false) and its coordinator, started with `spec`; `prepare` runs first with the job's new tenant (its provider keys, say). */
export async function startJob(
  build: (jobId: string, tenantId: string) => JobSpec,
  inputs: unknown[],
  withRow = true,
  prepare?: (tenantId: string) => Promise<unknown>,
): Promise<{ stub: Stub; jobId: string }> {
  const jobId = `job_${crypto.randomUUID().replaceAll("-", "")}`;
  const { tenantId } = await tenantWithKey();
  await prepare?.(tenantId);
  const spec = build(jobId, tenantId);
  if (withRow) await insertJobRow(jobId, tenantId, spec.type);
  const stub = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(jobId)) as Stub;
  await startHeld(stub, spec, inputs);
  return { stub, jobId };
}

/** Longer than any test: the start's alarm is the test's to run (`tick`), never the runtime's. */
const HELD_MS = 60_000;

/**
 * Starts a job with the alarm that begins it held back, so `tick` runs it. The runtime would run
 * it by itself at once: under load its run could be under way when `runDurableObjectAlarm` looks,
 * which then finds no alarm and returns at once, and the takeover came before the dispatch.
 * Until that tick the coordinator believes its alarm is due now, so it sets no other.
 */
async function startHeld(stub: Stub, spec: JobSpec, inputs: unknown[]): Promise<void> {
  await runInDurableObject(stub, (instance: JobCoordinator, state) =>
    state.blockConcurrencyWhile(async () => {
      await instance.start(spec, inputs);
      await state.storage.setAlarm(Date.now() + HELD_MS);
    }),
  );
}

export async function insertJobRow(jobId: string, tenantId: string, type: string): Promise<void> {
  const now = new Date();
  await env.DB.prepare(
    "INSERT INTO jobs (id, tenant_id, type, status, model, total, request_hash, created_ms, created_at) VALUES (?, ?, ?, 'queued', 'openai-compatible/m', 1, 'h', ?, ?)",
  )
    .bind(jobId, tenantId, type, now.getTime(), now.toISOString())
    .run();
}

/** Runs the alarm (start, sweep, dispatch), then takes over every running task. */
export async function tick(stub: Stub): Promise<TaskRow[]> {
  if (!(await runDurableObjectAlarm(stub))) throw new Error("tick: no alarm was set, so nothing ran");
  return takeOver(stub);
}

export async function takeOver(stub: Stub): Promise<TaskRow[]> {
  return runInDurableObject(stub, (_i, state) => {
    state.storage.sql.exec("UPDATE tasks SET token = 'test-' || stage || '-' || idx WHERE state = 'running'");
    return state.storage.sql.exec<TaskRow>("SELECT stage, idx, state, attempts, input, token, reserved FROM tasks ORDER BY stage, idx").toArray();
  });
}

export async function tasks(stub: Stub): Promise<TaskRow[]> {
  return runInDurableObject(stub, (_i, state) =>
    state.storage.sql.exec<TaskRow>("SELECT stage, idx, state, attempts, input, token, reserved FROM tasks ORDER BY stage, idx").toArray(),
  );
}

export async function events(stub: Stub): Promise<{ name: string; data: any }[]> {
  return runInDurableObject(stub, (_i, state) =>
    state.storage.sql
      .exec<{ name: string; data: string }>("SELECT name, data FROM events ORDER BY id")
      .toArray()
      .map((e) => ({ name: e.name, data: JSON.parse(e.data) })),
  );
}

export async function meta<T>(stub: Stub, key: string): Promise<T | undefined> {
  return runInDurableObject(stub, (_i, state) => {
    const row = state.storage.sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = ?", key).toArray()[0];
    return row ? (JSON.parse(row.v) as T) : undefined;
  });
}

const usage = { input_tokens: 3, output_tokens: 2 };
export const ok = (output: unknown): AttemptOutcome => ({ kind: "success", output, usage });
export const failed = (error = "boom"): AttemptOutcome => ({ kind: "permanent", error, errorKind: "llm_error", usage });

/** Reports an outcome for a task the test took over. */
export function report(stub: Stub, stage: string, index: number, outcome: AttemptOutcome, token = `test-${stage}-${index}`) {
  return stub.report({ stage, index, token }, outcome);
}

/**
 * Ends a job and waits until its pacer and limiter have heard it leave: the end tells them without
 * waiting, and a call still on its way when the test file's runtime closes is an uncaught teardown
 * error. The test's own leave, sent after the job's, returns once the object has handled both.
 */
export async function endJob(stub: Stub): Promise<void> {
  await stub.cancel();
  const credential = await meta<string>(stub, "credential");
  const spec = await meta<JobSpec>(stub, "spec");
  if (!credential || !spec) return;
  await ratePacer(env, credential, spec.model).leave(spec.jobId);
  await providerLimiter(env, credential, spec.model).leave(spec.jobId);
}
