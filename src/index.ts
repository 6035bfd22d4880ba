/** The Worker entry: wires the HTTP app, the Queue consumer, the retention cron and the Durable Object classes. */
import { buildApp } from "./app";
import { handleQueue, type TaskMessage } from "./queue";
import { sweepExpiredJobs } from "./jobs/delete";
import { sweepCache } from "./cache/response-cache";

export { JobCoordinator } from "../durable-objects/job-coordinator";
export { CallWorker } from "../durable-objects/call-worker";
export { AgentSession } from "../durable-objects/agent-session";
export { ProviderLimiter } from "../durable-objects/provider-limiter";
export { WorkerPool } from "../durable-objects/worker-pool";
export { RatePacer } from "../durable-objects/rate-pacer";

const app = buildApp();

export default {
  fetch: app.fetch,
  queue: handleQueue,
  // The cron trigger (wrangler.toml): ended jobs past JOB_RETENTION_DAYS are deleted, and cached
  // answers older than the largest cache TTL.
  scheduled: async (_controller, env, ctx) => {
    ctx.waitUntil(sweepExpiredJobs(env).then((n) => n > 0 && console.log(`retention: deleted ${n} ended jobs`)));
    ctx.waitUntil(sweepCache(env.DB).then((n) => n > 0 && console.log(`retention: deleted ${n} cached answers`)));
  },
} satisfies ExportedHandler<Env, TaskMessage>;
