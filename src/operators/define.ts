/**
 * An operator as one whole module: its job type, its route, its request schema, its submission
 * (the operator's own checks, then the shared submitJob) and its plan (the pure functions the
 * coordinator asks). The registry (./registry.ts) lists the modules; the job types, the routes
 * and the job schema's type enum are derived from that list.
 */
import type { z } from "@hono/zod-openapi";
import type { JobSpecBase, Operator } from "../engine/types";
import type { SubmitAnswer } from "../jobs/submit";
import type { JobRow, StoredResult } from "../db/jobs";

/** A boolean filter of `GET /v1/jobs/{id}/results` (the query's name): results whose stored JSON has `true` at `path`, or `false`. */
export interface ResultFlag {
  name: "kept" | "failed";
  path: string;
  /** Only succeeded results carry the value (a failed filter item is neither kept nor dropped). */
  succeededOnly?: boolean;
}

/** What the generic job routes show of an operator's jobs beyond every job's view: declared here, so the routes name no operator. */
export interface OperatorViews {
  resultFlags?: ResultFlag[];
  /** A stage listed its own way by `?stage=` (a pipeline's `steps`: every step, finished or not). */
  stageList?: { stage: string; list(db: D1Database, job: JobRow): Promise<unknown[]> };
  /** GET /v1/jobs/{id}/audit: the trail from the output to its sources (map-reduce). */
  audit?(results: (StoredResult & { stage: string })[]): unknown;
}

export interface OperatorModule<T extends string = string, S extends JobSpecBase = JobSpecBase, B extends z.ZodType = z.ZodType> {
  /** The job's `type` (GET /v1/jobs/{id}). */
  type: T;
  route: {
    /** Under /v1. */
    path: `/${string}`;
    operationId: string;
    summary: string;
    /** Other media types the path takes, read by a middleware of the routes before it (the pipelines' XML). */
    otherBodies?: Record<string, { schema: { type: "string"; description: string } }>;
    /** Answers of its own besides the shared ones, by status. */
    otherErrors?: Record<number, string>;
  };
  schema: B;
  submit(env: Env, tenantId: string, body: z.infer<B>, idempotencyKey: string | null, dryRun: boolean): Promise<SubmitAnswer>;
  operator: Operator<S>;
  views?: OperatorViews;
}

/** Checks a module's parts against each other (the spec's type is the module's, the submission takes the schema's body). */
export function defineOperator<T extends string, S extends JobSpecBase & { type: T }, B extends z.ZodType>(
  module: OperatorModule<T, S, B>,
): OperatorModule<T, S, B> {
  return module;
}

/** The job spec a module's operator runs. */
export type SpecOf<M> = M extends OperatorModule<string, infer S, z.ZodType> ? S : never;
