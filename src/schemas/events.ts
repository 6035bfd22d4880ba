/**
 * The data of every event on a job's stream, as zod schemas registered in the OpenAPI document
 * (components), so the client's event types are generated from the same source as the server's.
 */
import { z } from "@hono/zod-openapi";
import { CostUsdSchema, UsageSchema } from "./map";
import {
  ProviderBatchSchema,
  BudgetSchema,
  JobErrorSchema,
  JobUsageSchema,
  JOB_STATUSES,
  PacingSchema,
  PipelineStepSchema,
  TaskResultSchema,
  EvaluationItemSchema,
} from "./jobs";

/** Each event's name on the stream, and the schema of its data. */
export const EVENT_DATA = {
  MAP_STARTED: z.object({
    job_id: z.string(),
    total: z.number().int(),
    model: z.string(),
    type: z.string().optional(),
    stages: z
      .array(z.object({ name: z.string(), total: z.number().int() }))
      .optional()
      .openapi({ description: "Staged jobs: each stage's size as planned (0 where it is known only later)" }),
  }),
  MAP_ITEM_COMPLETED: z.object({ job_id: z.string(), completed: z.number().int(), total: z.number().int(), success: z.boolean(), result: z.unknown() }),
  MAP_COMPLETED: z.object({
    job_id: z.string(),
    status: z.enum(JOB_STATUSES),
    total: z.number().int(),
    completed: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    total_attempts: z.number().int(),
    usage: JobUsageSchema,
    cost_usd: CostUsdSchema.optional().openapi({ description: "The job's dollars (jobs ended since v3)" }),
    output: z.unknown().optional().openapi({ description: "Staged jobs: the job's final value" }),
    error: JobErrorSchema.nullable().optional().openapi({ description: "Staged jobs: the failure context" }),
  }),
  STAGE_STARTED: z.object({ job_id: z.string(), stage: z.string(), total: z.number().int() }),
  STAGE_COMPLETED: z.object({ job_id: z.string(), stage: z.string(), succeeded: z.number().int(), failed: z.number().int(), usage: UsageSchema }),
  TASK_COMPLETED: z.object({
    job_id: z.string(),
    stage: z.string(),
    index: z.number().int(),
    success: z.boolean(),
    result: z.union([TaskResultSchema, PipelineStepSchema, EvaluationItemSchema]),
  }),
  JOB_PAUSED: z.object({ job_id: z.string(), reason: z.string(), budget: BudgetSchema.nullable() }),
  JOB_RESUMED: z.object({ job_id: z.string() }),
  JOB_RECOVERING: z.object({ job_id: z.string(), tasks: z.number().int() }),
  SUBTASK_STARTED: z.object({
    job_id: z.string(),
    stage: z.string().openapi({ description: "The children's stage: `<parent stage>.subtasks`" }),
    index: z.number().int().openapi({ description: "The child's index in that stage" }),
    session_id: z.string(),
    parent_session_id: z.string(),
    depth: z.number().int().openapi({ description: "1 for a child of an item's own session" }),
  }),
  SUBTASK_COMPLETED: z.object({
    job_id: z.string(),
    stage: z.string(),
    index: z.number().int(),
    success: z.boolean(),
    result: z.unknown().openapi({ description: "The child's result as `/results?stage=<stage>` lists it: its session, parent, depth, output, usage" }),
  }),
  CONCURRENCY_CHANGED: z.object({
    job_id: z.string(),
    effective_concurrency: z.number().int().openapi({ description: "The calls the job may have in flight from now on" }),
    reason: z.enum(["throttled", "recovered", "shared"]).openapi({
      description:
        "throttled: the provider pushed back; recovered: successes grew it, or a paced first round ended unthrottled; shared: the tenant's limit for the model, split among its jobs, or the paced first round on a model the tenant has not used for ten minutes",
    }),
  }),
  PACING_CHANGED: z.object({
    job_id: z.string(),
    pacing: PacingSchema,
  }),
  BATCH_SUBMITTED: z.object({ job_id: z.string(), batch: ProviderBatchSchema }),
  BATCH_PROGRESS: z.object({
    job_id: z.string(),
    batch: ProviderBatchSchema.openapi({ description: "The batch with its counts as the provider now reports them" }),
  }),
  BATCH_ENDED: z.object({
    job_id: z.string(),
    batch: ProviderBatchSchema.openapi({
      description: "The batch ended at the provider (or was refused); its lines' results follow as their tasks' completion events, or go into a later batch",
    }),
  }),
} as const;

export type EventName = keyof typeof EVENT_DATA;
/** What the coordinator emits as an event's data (checked when it compiles). */
export type EventData<K extends EventName> = z.input<(typeof EVENT_DATA)[K]>;

/** An event's schema name in the OpenAPI document's components (and the client's types): MAP_ITEM_COMPLETED is MapItemCompletedEvent. */
export function eventSchemaName(name: EventName): string {
  return `${name.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _sep: string, c: string) => c.toUpperCase())}Event`;
}

/**
 * One event as it arrives on the stream, its SSE fields read: `id`, `event` and `data` (JSON).
 * The stream's response schema names it (`contentSchema`), so generated clients get the union.
 */
export function jobEventSchema() {
  const frames = (Object.keys(EVENT_DATA) as EventName[]).map((name) =>
    z.object({
      id: z.number().int().openapi({ description: "The SSE `id:` field: 1, 2, 3… in the job's order; send it back as Last-Event-ID" }),
      event: z.literal(name),
      data: EVENT_DATA[name].openapi(eventSchemaName(name)),
    }),
  );
  return z.union(frames).openapi("JobEvent", { description: "One event of a job's stream, as an SSE reader parses it" });
}

/** The 200 body of an event stream: text/event-stream whose events are JobEvent. */
export const eventStreamContent = {
  "text/event-stream": {
    schema: z.string().openapi({
      description: "`id: N`, `event: NAME` and `data: {json}` lines per event, a blank line after each; `: keepalive` comments between",
      contentMediaType: "text/event-stream",
      contentSchema: { type: "array", items: { $ref: "#/components/schemas/JobEvent" } },
    } as never),
  },
};
