/** Schemas of the job routes' responses and query parameters. */
import { ModelWarningSchema } from "./warnings";
import { z } from "@hono/zod-openapi";
import { answerFields, CallUsageSchema, CostUsdSchema, ErrorKindSchema, MapResultSchema, UsageSchema } from "./map";
import { AgentMapResultSchema } from "./agentic";
import { ModelSchema, TimeoutSecsSchema } from "./common";
import { JOB_TYPES } from "../operators/registry";
import { BudgetChangeSchema } from "../operators/budget-schema";

/** One model of a job's fallback chain as the job view shows it. */
export const ChainModelSchema = z
  .object({
    model: z.string(),
    circuit: z.enum(["closed", "open", "half_open"]).openapi({
      description:
        "closed: calls go to it; open: it answered outages in a row, and for a while the items with a model after it in their chain go there instead; half_open: its cool-down is over, one call probes it",
    }),
    answered: z.number().int().openapi({ description: "Items it answered" }),
    deployments: z
      .array(
        z.object({ deployment: z.number().int().openapi({ description: "Its place in the pool, from 1" }), circuit: z.enum(["closed", "open", "half_open"]) }),
      )
      .optional()
      .openapi({
        description: "On a pool of deployments (PUT /v1/providers/{provider} `deployments`): each deployment's circuit for this model, as this job sees it",
      }),
  })
  .openapi("ChainModel");

export const TaskResultSchema = z
  .object({
    stage: z.string(),
    index: z.number().int(),
    success: z.boolean(),
    output: z.unknown(),
    error: z.string().nullable(),
    error_kind: ErrorKindSchema,
    attempts: z.number().int(),
    usage: CallUsageSchema,
    cost_usd: CostUsdSchema,
    ...answerFields,
  })
  .catchall(z.unknown())
  .openapi("TaskResult", { description: "A finished task of a staged job; each operator adds its fields (reduce: `name`, `accumulator`)" });

/** A pipeline's `?stage=steps` row: one per step, finished (its marker) or not (its stages' progress). */
export const PipelineStepSchema = z
  .object({
    index: z.number().int(),
    step: z.string().openapi({ description: "The step's id path" }),
    status: z.enum(["pending", "running", "completed", "failed"]),
    success: z.boolean().openapi({ description: "True once the step finished" }),
    output: z.unknown().openapi({ description: "The step's value in the shared store once it finished, else null" }),
    usage: UsageSchema,
  })
  .openapi("PipelineStep", {
    description: "A step of a pipeline, as `GET /v1/jobs/{id}/results?stage=steps` lists it (and `TASK_COMPLETED` of stage `steps` carries it)",
  });

const VerdictSchema = z.object({ pass: z.boolean(), reason: z.string() });

export const EvaluationItemSchema = z
  .object({
    index: z.number().int().openapi({ description: "The evaluated job's item" }),
    success: z.literal(true),
    verdicts: z
      .record(z.string(), VerdictSchema)
      .nullable()
      .optional()
      .openapi({ description: "The judge's verdict on every criterion (null: the judge's call failed; absent: not in the judge's sample)" }),
    judge_error: z.string().nullable().optional().openapi({ description: "Why the judge gave no verdicts" }),
    failed: z.boolean().optional().openapi({ description: "Some criterion did not pass (`?failed=true` lists these)" }),
    gold_match: z.boolean().optional().openapi({ description: "The result is what the gold label says (a failed result never is)" }),
    expected: z.unknown().optional().openapi({ description: "The gold label" }),
    output: z.unknown().optional().openapi({ description: "With a gold label: the evaluated result's output" }),
    preference: z
      .object({ ab: z.enum(["A", "B", "tie"]).nullable(), ba: z.enum(["A", "B", "tie"]).nullable(), preferred: z.enum(["a", "b", "tie"]).nullable() })
      .optional()
      .openapi({
        description:
          "A/B: the judge's answer to each order (`ab`: the evaluated job's answer shown as A; `ba`: as B) and the preference they make (a disagreement is a tie; null: a call failed)",
      }),
  })
  .openapi("EvaluationItem", { description: "An evaluation's item (its `items` stage): the verdicts, gold match and preference of one evaluated result" });

const ItemResultSchema = z.union([MapResultSchema, AgentMapResultSchema, TaskResultSchema, PipelineStepSchema, EvaluationItemSchema]);
export type ItemResult = z.infer<typeof ItemResultSchema>;

export const JobUsageSchema = CallUsageSchema.extend({
  duplicated: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int(), cost_usd: z.number() }).openapi({
    description:
      "Execution mode auto: calls the provider billed for items that had (or were getting) their result another way — a batch line that finished after its item's realtime call started. Not in input_tokens/output_tokens; their dollars are in the job's cost_usd (what the provider bills)",
  }),
  cached: z.object({ calls: z.number().int(), input_tokens: z.number().int(), output_tokens: z.number().int() }).openapi({
    description: "Calls answered from the response cache (no tokens spent; not in input_tokens/output_tokens) and the tokens their original calls cost",
  }),
  interrupted: z.object({ calls: z.number().int(), input_tokens: z.number().int() }).openapi({
    description:
      "Calls sent again because the first never reported (the service restarted while it was under way): the provider may have billed the first. Each counts as an attempt; input_tokens is what their prompts held (the re-sent call's count of the same prompt); their output is unknown. Not in input_tokens/output_tokens or cost_usd",
  }),
}).openapi("JobUsage");

export const JOB_STATUSES = ["queued", "running", "paused", "completed", "cancelled", "failed"] as const;

const StageSchema = z
  .object({
    name: z.string(),
    status: z.enum(["pending", "running", "completed", "failed", "skipped"]),
    total: z.number().int(),
    completed: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    usage: CallUsageSchema,
    cost_usd: CostUsdSchema,
    step: z
      .string()
      .optional()
      .openapi({ description: "A pipeline's stages: the step (its id, with its sequential parents' as `outer.inner`) the stage is part of" }),
  })
  .openapi("Stage");

export const JobErrorSchema = z
  .object({
    code: z.string(),
    message: z.string(),
    stage: z.string().nullable(),
    index: z.number().int().nullable(),
    step: z.string().nullable(),
    details: z
      .object({ cap: z.number().int(), size: z.number().int() })
      .optional()
      .openapi({ description: "`stage_too_large`: the stage's documented cap, and the size model output would have given it" }),
  })
  .openapi("JobError", { description: "Why a job failed, and where" });

export const BudgetSchema = z
  .object({
    total: z.number().int().nullable().openapi({ description: "The token limit (null: only a dollar limit)" }),
    spent: z.number().int().openapi({ description: "Tokens spent" }),
    reserved: z.number().int().openapi({ description: "Tokens reserved by the calls in flight" }),
    by_stage: z.record(z.string(), z.number().int()),
    usd: z
      .object({ limit: z.number(), spent: z.number(), reserved: z.number() })
      .nullable()
      .openapi({ description: "The dollar limit (`token_budget.usd`), the dollars spent and those reserved by the calls in flight; null without one" }),
  })
  .openapi("Budget");

const estimateCacheFields = {
  cached_input_tokens: z
    .number()
    .int()
    .openapi({ description: "Of input_tokens: expected reads of the provider's prompt cache (each stage's shared prefix after its first call)" }),
  cache_write_input_tokens: z.number().int().openapi({ description: "Of input_tokens: expected writes to it (Anthropic)" }),
};

const estimateOutputFields = {
  output_tokens: z.number().int().openapi({
    description:
      "The output tokens expected: each call's answer sized from its output schema (a quarter of max_tokens without one), at most its max_tokens (`method` says how)",
  }),
  output_tokens_max: z.number().int().openapi({ description: "The upper bound: each call's max_tokens (1,024 when unset), as budgets reserve it" }),
};

const StageEstimateSchema = z.object({
  calls: z.number().int(),
  input_tokens: z.number().int(),
  ...estimateOutputFields,
  ...estimateCacheFields,
  cost_usd: CostUsdSchema.openapi({ description: "Expected dollars in realtime (null: a model without a price)" }),
  cost_usd_max: CostUsdSchema.openapi({ description: "Dollars in realtime at the output bound" }),
});

const ByModeSchema = z.object({ realtime: z.number().nullable(), batch: z.number().nullable() });

export const EstimateSchema = z
  .object({
    estimate: z.object({
      calls: z.number().int(),
      cached_calls: z
        .number()
        .int()
        .openapi({ description: "Of `calls`, those the job's response cache already answers (prompts known before the job runs); they count no tokens" }),
      input_tokens: z.number().int(),
      ...estimateOutputFields,
      total_tokens: z
        .number()
        .int()
        .openapi({ description: "input_tokens + output_tokens_max: what a token budget must hold (the 422 check compares it with token_budget.total)" }),
      ...estimateCacheFields,
      cost_usd: CostUsdSchema.openapi({ description: "The expected dollars in realtime; null when a model has no price" }),
      cost_usd_max: CostUsdSchema.openapi({ description: "The dollars at the output bound (realtime): what a dollar budget reserves and the 422 check uses" }),
      cost_usd_by_mode: ByModeSchema.openapi({ description: "The expected dollars in realtime and through the provider's batch API (its discount)" }),
      cost_usd_max_by_mode: ByModeSchema.openapi({ description: "The same at the output bound" }),
      by_stage: z.record(z.string(), StageEstimateSchema),
      method: z.string(),
    }),
  })
  .openapi("Estimate");

const ModelPacingSchema = z
  .object({
    rpm: z.number().nullable().openapi({ description: "The requests per minute the job's calls are paced to (null: no request limit known)" }),
    tpm: z.number().nullable().openapi({ description: "The tokens per minute (Anthropic: input tokens) they are paced to (null: no token limit known)" }),
    source: z.enum(["job", "declared", "headers", "adaptive"]).nullable().openapi({
      description:
        "Where the limit comes from: the job's `rate_limit`, the tenant's declared `rate_limits`, the provider's rate-limit headers, or adaptive concurrency after throttles (no rate limit known); null: not paced",
    }),
    share: z
      .number()
      .nullable()
      .openapi({ description: "The job's share of the limit while other jobs on the same credential and model wait for theirs (1: the whole limit)" }),
  })
  .openapi("ModelPacing", { description: "How the calls of one model are paced by the provider's rate limits (its credential and model's)" });

export const PacingSchema = ModelPacingSchema.extend({
  models: z.record(z.string(), ModelPacingSchema).optional().openapi({
    description:
      "The pacing of each other model the job's stages call (a cascade's cheaper model, a pipeline step's or a task's own), by model id; absent when the job calls only its own model. The fields above are the job's own model's",
  }),
}).openapi("Pacing", {
  description: "How the job's calls are paced by the provider's rate limits (contract v3): its own model's, and each other model's in `models`",
});

export const ProviderBatchSchema = z
  .object({
    id: z.string().openapi({ description: "Fanout's id of the batch" }),
    provider_batch_id: z
      .string()
      .nullable()
      .openapi({ description: "The provider's (OpenAI `batch_…`, Anthropic `msgbatch_…`); null while it is being submitted" }),
    stage: z.string(),
    status: z.string().openapi({
      description:
        "`submitting`, the provider's status while it runs (OpenAI `validating`, `in_progress`, `finalizing`, `cancelling`; Anthropic `in_progress`, `canceling`), then `ended` (its results settled) or `failed` (refused: its lines went back to their tasks' retry policy)",
    }),
    requests: z.number().int(),
    completed: z.number().int(),
    failed: z.number().int(),
    submitted_at: z.string().nullable(),
    ended_at: z.string().nullable(),
  })
  .openapi("ProviderBatch", { description: "A provider batch of the job's calls (contract v3, execution mode batch or auto)" });

export const ExecutionViewSchema = z.object({ mode: z.enum(["realtime", "batch", "auto", "flex"]), deadline_secs: z.number().int() }).openapi("Execution");

export const JobSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable().openapi({ description: "The name the job was submitted with (null: none)" }),
    warnings: z.array(ModelWarningSchema).openapi({ description: "What the job was told when it was submitted: a model that retires soon (empty: nothing)" }),
    evaluates: z.string().nullable().openapi({ description: "An evaluation's: the job it evaluates (null: not an evaluation)" }),
    evaluations: z
      .array(z.string())
      .optional()
      .openapi({ description: "GET /v1/jobs/{id} only: the ids of this job's evaluations, newest first (at most 100)" }),
    type: z.enum(JOB_TYPES),
    status: z.enum(JOB_STATUSES),
    model: z.string(),
    total: z.number().int(),
    completed: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    total_attempts: z.number().int(),
    usage: JobUsageSchema,
    cost_usd: CostUsdSchema,
    metadata: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    completed_at: z.string().nullable(),
    stage: z.string().nullable(),
    stages: z.array(StageSchema),
    output: z.unknown(),
    error: JobErrorSchema.nullable(),
    budget: BudgetSchema.nullable(),
    pause_reason: z.string().nullable(),
    effective_concurrency: z.number().int().nullable().openapi({
      description:
        "The calls the job may have in flight now: its concurrency, or less while the provider throttles this tenant's calls to the model (null until it starts)",
    }),
    pacing: PacingSchema,
    execution: ExecutionViewSchema,
    batches: z.array(ProviderBatchSchema).openapi({ description: "The job's provider batches, oldest first (empty in realtime)" }),
    models: z.array(ChainModelSchema).openapi({
      description:
        "A job with `fallbacks` or on a pool of deployments: its model and each fallback, in order, with its circuit, the items it answered, and each deployment's circuit on a pool (empty without either)",
    }),
    expected: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int(), cost_usd: z.number().nullable() }).nullable().openapi({
      description:
        "While the job runs (or is paused): what it is expected to have spent when it ends — each stage's spend so far plus its tasks left at the mean of its finished tasks. Null until every stage with tasks left has finished one, and once the job has ended (its usage is then what it spent). A stage not sized yet (a later reduce level) is not counted",
    }),
  })
  .openapi("Job");

export const JobListSchema = z.object({ jobs: z.array(JobSchema), next_cursor: z.string().nullable() }).openapi("JobList");

export const ResultPageSchema = z.object({ results: z.array(ItemResultSchema), next_cursor: z.string().nullable() }).openapi("ResultPage");

export const BatchSchema = z
  .object({
    job_id: z.string(),
    successes: z.array(ItemResultSchema),
    failures: z.array(ItemResultSchema),
    total: z.number().int(),
    total_attempts: z.number().int(),
  })
  .openapi("Batch");

const limitParam = (max: number, fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .openapi({ description: `1–${max}, default ${fallback}` });

export const JobListQuery = z.object({
  status: z.enum(JOB_STATUSES).optional(),
  limit: limitParam(100, 20),
  cursor: z.string().optional(),
});

export const ResultsQuery = z.object({
  stage: z.string().max(200).optional().openapi({ description: "The stage whose tasks to page (default: the job's main stage)" }),
  order: z.enum(["input", "completion"]).default("input"),
  status: z.enum(["succeeded", "failed"]).optional(),
  kept: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "Filter jobs: only the items the model kept (`true`) or dropped (`false`); failed items are neither" }),
  failed: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "Evaluation jobs: only the items the judge failed on some criterion (`true`), or those it passed on every one (`false`)" }),
  limit: limitParam(1000, 100),
  cursor: z.string().optional(),
});

const AuditNodeSchema = z.object({
  id: z.string().openapi({ description: "`<stage>:<index>`" }),
  stage: z.string(),
  level: z.number().int().nullable(),
  key: z.string().nullable(),
  sources: z.array(z.number().int()).openapi({ description: "The documents behind this call" }),
  inputs: z.array(z.string()).openapi({ description: "The calls that fed it" }),
  usage: UsageSchema,
});

export const AuditSchema = z.object({ documents: z.number().int(), left_out: z.array(z.number().int()), nodes: z.array(AuditNodeSchema) }).openapi("Audit");

export const RecoverRequestSchema = z
  .strictObject({
    model: ModelSchema.optional(),
    max_retries: z.number().int().min(0).max(10).optional(),
    timeout_secs: TimeoutSecsSchema.optional(),
    error_kinds: z
      .array(ErrorKindSchema.unwrap())
      .min(1)
      .max(ErrorKindSchema.unwrap().options.length)
      .optional()
      .openapi({ description: "Only failed tasks of these kinds (unfinished tasks always run)" }),
    token_budget: BudgetChangeSchema.optional(),
  })
  .openapi("RecoverRequest");

export const RecoverAnswerSchema = z.object({ job_id: z.string(), status: z.literal("running"), recovering: z.number().int() }).openapi("Recovering");

export const ResumeRequestSchema = z.strictObject({ token_budget: BudgetChangeSchema.optional() }).openapi("ResumeRequest");

export const JobIdParam = z.object({ job_id: z.string().openapi({ example: "job_3kq…" }) });
