/**
 * `execution` (contract v3, "Execution modes"), on the operators whose stages are independent
 * single calls: realtime (the default), batch (the provider's batch API, half the price, within its
 * 24 h window) or auto (batch first; before `deadline_secs` the unfinished items run realtime).
 */
import { z } from "@hono/zod-openapi";
import type { ExecutionSpec } from "../engine/types";

export const DEFAULT_DEADLINE_SECS = 86_400;

export const ExecutionSchema = z
  .strictObject({
    mode: z.enum(["realtime", "batch", "auto"]).default("realtime"),
    deadline_secs: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400)
      .default(DEFAULT_DEADLINE_SECS)
      .openapi({
        description:
          "By when, from the job's start, every item should have a result, in seconds (up to 7 days). auto: the unfinished items move to realtime when the time left is what they need there (one call, at most 10 s or the call's timeout, per concurrency slot in turn). batch: past it the open provider batches are cancelled and the items without a result fail `expired`",
      }),
  })
  .openapi("ExecutionRequest", {
    description:
      "How the job's independent calls run: `realtime` (default); `batch`, through the provider's batch API (OpenAI Batch, Anthropic Message Batches: half the price, results within the provider's 24 h window; 400 `unsupported_execution_mode` for a provider without one); `auto`, batch first, the unfinished items realtime when the deadline comes near (realtime where the provider has no batch API). A fold's reductions and agent turns always run realtime.",
  });

export const executionField = { execution: ExecutionSchema.optional() };

export function executionSpec(body: { execution?: { mode: ExecutionSpec["mode"]; deadline_secs: number } }): ExecutionSpec | null {
  const e = body.execution;
  return e && e.mode !== "realtime" ? { mode: e.mode, deadlineSecs: e.deadline_secs } : null;
}
