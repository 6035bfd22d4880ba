/**
 * The names of every Durable Object, in one place: a job's coordinator is named by the job id, a
 * call worker by `<job id>:<slot>` (one per concurrency slot of a job), an agent sub-session by
 * its session id, a provider limiter by `<tenant id>:<model>`.
 */
export function jobCoordinator(env: Env, jobId: string) {
  return env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(jobId));
}

export function callWorker(env: Env, jobId: string, slot: number) {
  return env.MAP_WORKER.get(env.MAP_WORKER.idFromName(`${jobId}:${slot}`));
}

export function agentSession(env: Env, sessionId: string) {
  return env.AGENT_SESSION.get(env.AGENT_SESSION.idFromName(sessionId));
}

export function providerLimiter(env: Env, tenantId: string, model: string) {
  return env.PROVIDER_LIMITER.get(env.PROVIDER_LIMITER.idFromName(`${tenantId}:${model}`));
}
