/** The Worker entry: wires the HTTP app, the Queue consumer and the Durable Object classes. */
import { buildApp } from "./app";
import { handleQueue, type TaskMessage } from "./queue";

export { JobCoordinator } from "../durable-objects/job-coordinator";
export { MapWorker } from "../durable-objects/map-worker";
export { AgentSession } from "../durable-objects/agent-session";

const app = buildApp();

export default {
  fetch: app.fetch,
  queue: handleQueue,
} satisfies ExportedHandler<Env, TaskMessage>;
