/**
 * The names of every Durable Object, in one place: a job's coordinator is named by the job id, a
 * call worker by a name from src/engine/worker-blocks.ts (`<tenant id>:w<n>` from the tenant's
 * pool, else `<job id>:<slot>`), an agent sub-session by its session id, a provider limiter and a
 * rate pacer by `<credential id>:<model>` (src/llm/credential.ts), a worker pool by the tenant id.
 */
export function jobCoordinator(env: Env, jobId: string) {
  return env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(jobId));
}

export function callWorker(env: Env, name: string) {
  return env.CALL_WORKER.get(env.CALL_WORKER.idFromName(name));
}

export function agentSession(env: Env, sessionId: string) {
  return env.AGENT_SESSION.get(env.AGENT_SESSION.idFromName(sessionId));
}

/** The adaptive limit of one provider credential (`credentialId`: src/llm/credential.ts) and model. */
export function providerLimiter(env: Env, credentialId: string, model: string) {
  return env.PROVIDER_LIMITER.get(env.PROVIDER_LIMITER.idFromName(`${credentialId}:${model}`));
}

/** The pacer of one provider credential (`credentialId`: durable-objects/coordinator/pacing.ts) and model. */
export function ratePacer(env: Env, credentialId: string, model: string) {
  return env.RATE_PACER.get(env.RATE_PACER.idFromName(`${credentialId}:${model}`));
}

export function workerPool(env: Env, tenantId: string) {
  return env.WORKER_POOL.get(env.WORKER_POOL.idFromName(tenantId));
}
