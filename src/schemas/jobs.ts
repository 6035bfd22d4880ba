/** Schemas of the job routes' responses and query parameters. */
import { z } from "@hono/zod-openapi";
import { MapResultSchema, UsageSchema } from "./map";
import { AgentMapResultSchema } from "./agentic";

const ItemResultSchema = z.union([MapResultSchema, AgentMapResultSchema]);

export const JobSchema = z
  .object({
    id: z.string(),
    type: z.enum(["map", "agentic_map"]),
    status: z.enum(["queued", "running", "completed", "cancelled", "failed"]),
    model: z.string(),
    total: z.number().int(),
    completed: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    total_attempts: z.number().int(),
    usage: UsageSchema,
    metadata: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .openapi("Job");

export const JobListSchema = z.object({ jobs: z.array(JobSchema), next_cursor: z.string().nullable() }).openapi("JobList");

export const ResultPageSchema = z
  .object({ results: z.array(ItemResultSchema), next_cursor: z.string().nullable() })
  .openapi("ResultPage");

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
  z.coerce.number().int().min(1).max(max).default(fallback).openapi({ description: `1–${max}, default ${fallback}` });

export const JobListQuery = z.object({
  status: z.enum(["queued", "running", "completed", "cancelled", "failed"]).optional(),
  limit: limitParam(100, 20),
  cursor: z.string().optional(),
});

export const ResultsQuery = z.object({
  order: z.enum(["input", "completion"]).default("input"),
  status: z.enum(["succeeded", "failed"]).optional(),
  limit: limitParam(1000, 100),
  cursor: z.string().optional(),
});

export const JobIdParam = z.object({ job_id: z.string().openapi({ example: "job_3kq…" }) });
