/** Shapes stored rows into the API's response bodies, and encodes opaque cursors. */
import type { JobRow } from "../db/jobs";
import type { ModelWarning } from "../llm/lifecycle";
import { costOut, usageView } from "../engine/counters";
import type { JobType } from "../operators/registry";
import { ApiError } from "../lib/errors";
import type { z } from "@hono/zod-openapi";
import type {
  ChainModelSchema,
  ProviderBatchSchema,
  BudgetSchema,
  ExecutionViewSchema,
  JOB_STATUSES,
  JobErrorSchema,
  JobSchema,
  PacingSchema,
} from "../schemas/jobs";
import { DEFAULT_DEADLINE_SECS } from "../operators/execution-field";

const REALTIME = { mode: "realtime" as const, deadline_secs: DEFAULT_DEADLINE_SECS };
import { NO_PACING } from "../engine/pacing";
import { expectedOf, type StageSpend } from "./expected";

const parsed = <T>(json: string | null): T | null => (json === null ? null : (JSON.parse(json) as T));

export function jobView(row: JobRow) {
  return {
    id: row.id,
    name: row.name ?? null,
    type: row.type as JobType,
    warnings: warningsOf(row),
    evaluates: row.evaluates ?? null,
    status: row.status as (typeof JOB_STATUSES)[number],
    model: row.model,
    total: row.total,
    completed: row.completed,
    succeeded: row.succeeded,
    failed: row.failed,
    total_attempts: row.total_attempts,
    usage: usageView(row),
    cost_usd: costOut(row),
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    created_at: row.created_at,
    completed_at: row.completed_at,
    stage: row.stage,
    stages: JSON.parse(row.stages) as z.infer<typeof JobSchema>["stages"],
    output: parsed<unknown>(row.output),
    error: parsed<z.infer<typeof JobErrorSchema>>(row.error),
    budget: parsed<z.infer<typeof BudgetSchema>>(row.budget),
    pause_reason: row.pause_reason,
    effective_concurrency: row.effective_concurrency,
    pacing: parsed<z.infer<typeof PacingSchema>>(row.pacing) ?? NO_PACING,
    execution: parsed<z.infer<typeof ExecutionViewSchema>>(row.execution) ?? REALTIME,
    batches: parsed<z.infer<typeof ProviderBatchSchema>[]>(row.batches) ?? [],
    models: parsed<z.infer<typeof ChainModelSchema>[]>(row.models ?? null) ?? [],
    expected: row.status === "running" || row.status === "paused" ? expectedOf(JSON.parse(row.stages) as StageSpend[]) : null,
  };
}

/** The model warnings a job was submitted with (a row from before they were kept: none). */
export function warningsOf(row: Pick<JobRow, "warnings">): ModelWarning[] {
  return parsed<ModelWarning[]>(row.warnings ?? null) ?? [];
}

export function jobLinks(jobId: string) {
  return { self: `/v1/jobs/${jobId}`, events: `/v1/jobs/${jobId}/events`, results: `/v1/jobs/${jobId}/results` };
}

export function encodeCursor(parts: (string | number)[]): string {
  return btoa(JSON.stringify(parts)).replaceAll("=", "");
}

export function decodeCursor(cursor: string): unknown[] {
  try {
    const value: unknown = JSON.parse(atob(cursor));
    if (Array.isArray(value)) return value;
  } catch {
    // fall through to the error below
  }
  throw new ApiError(400, "invalid_request", "The cursor is not valid.", { details: [{ path: "cursor", message: "not a cursor from this API" }] });
}
