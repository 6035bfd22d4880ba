/** The Worker entry: wires the HTTP app, the Queue consumer, the retention cron and the Durable Object classes. */
import { buildApp } from "./app";
import { handleQueue, type TaskMessage } from "./queue";
import { sweepExpiredJobs } from "./jobs/delete";

export { JobCoordinator } from "../durable-objects/job-coordinator";
export { MapWorker } from "../durable-objects/map-worker";
export { AgentSession } from "../durable-objects/agent-session";

const app = buildApp();

export default {
  fetch: app.fetch,
  queue: handleQueue,
  // The cron trigger (wrangler.toml): ended jobs past JOB_RETENTION_DAYS are deleted.
  scheduled: async (_controller, env, ctx) => {
    ctx.waitUntil(sweepExpiredJobs(env).then((n) => n > 0 && console.log(`retention: deleted ${n} ended jobs`)));
  },
} satisfies ExportedHandler<Env, TaskMessage>;
