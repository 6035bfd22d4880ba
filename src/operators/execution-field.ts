/**
 * `execution` (contract v3, "Execution modes"; v4 flex), on the operators whose stages are
 * independent single calls: realtime (the default), batch (the provider's batch API, half the price,
 * within its 24 h window), flex (OpenAI's flex tier: synchronous calls at the batch price) or auto
 * (batch first; as `deadline_secs` comes near the unfinished items run on the flex tier where every
 * model has one, then on the standard tier: ../engine/execution.ts).
 */
import { z } from "@hono/zod-openapi";
import type { ExecutionSpec } from "../engine/types";

export const DEFAULT_DEADLINE_SECS = 86_400;

export const ExecutionSchema = z
  .strictObject({
    mode: z.enum(["realtime", "batch", "auto", "flex"]).default("realtime"),
    deadline_secs: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400)
      .default(DEFAULT_DEADLINE_SECS)
      .openapi({
        description:
          "By when, from the job's start, every item should have a result, in seconds (up to 7 days). auto: the unfinished items move to the flex tier (OpenAI models only) when the time left is what they need there (one call of 30 s per concurrency slot in turn), then to the standard tier when it is what they need there (one call, at most 10 s or the call's timeout, per slot in turn). batch: past it the open provider batches are cancelled and the items without a result fail `expired`",
      }),
  })
  .openapi("ExecutionRequest", {
    description:
      "How the job's independent calls run: `realtime` (default); `batch`, through the provider's batch API (OpenAI Batch, Anthropic Message Batches: half the price, results within the provider's 24 h window; 400 `unsupported_execution_mode` for a provider without one); `flex`, OpenAI's flex tier (`service_tier: \"flex\"`: synchronous calls at the batch price, a 15-minute timeout, its busy answers `429 resource_unavailable` unbilled back-pressure; 400 `unsupported_execution_mode` unless every model of the job is OpenAI's); `auto`, a ladder: batch first, then flex, then the standard tier, each as the deadline needs (flex only where every model is OpenAI's; realtime where the provider has no batch API). Agent turns always run on the standard tier; a fold's reductions run realtime (on flex in mode flex).",
  });

export const executionField = { execution: ExecutionSchema.optional() };

export function executionSpec(body: { execution?: { mode: ExecutionSpec["mode"]; deadline_secs: number } }): ExecutionSpec | null {
  const e = body.execution;
  return e && e.mode !== "realtime" ? { mode: e.mode, deadlineSecs: e.deadline_secs } : null;
}
