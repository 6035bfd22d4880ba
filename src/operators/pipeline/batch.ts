/**
 * Batch nodes of a pipeline (v2 contract; reference: batch-node spec): the submission checks with
 * the contract's exact messages, the run-time check of what `batch.items` resolved to, and the
 * step's result in the shared store.
 */
import type { FieldIssue } from "../../lib/errors";
import { isIdentifier, isReference, jsonTypeName } from "./refs";

export const DEFAULT_MAX_CONCURRENT = 16;
export const MAX_CONCURRENT = 128;

export interface BatchSettings {
  items: string;
  as: string;
  errorHandling: "fail_fast" | "continue";
  maxConcurrent: number;
  /** The most elements `items` may resolve to (MAX_ITEMS_PER_JOB when the job was submitted). */
  maxItems: number;
}

/** Checks a step's `batch` object as submitted; `path` is the step's, e.g. `steps[2]`. */
export function checkBatch(batch: unknown, path: string, maxItems: number): { settings: BatchSettings | null; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  const at = (field: string, message: string) => issues.push({ path: `${path}.batch.${field}`, message });
  if (typeof batch !== "object" || batch === null || Array.isArray(batch)) {
    at("items", "batch.items is required");
    return { settings: null, issues };
  }
  const b = batch as Record<string, unknown>;
  if (b.items === undefined || b.items === null) at("items", "batch.items is required");
  else if (!isReference(b.items)) at("items", "batch.items must be a template reference");
  const as = b.as ?? "item";
  if (typeof as !== "string" || !isIdentifier(as)) at("as", "batch.as must be a valid identifier");
  const errorHandling = b.error_handling ?? "fail_fast";
  if (errorHandling !== "fail_fast" && errorHandling !== "continue") at("error_handling", "batch.error_handling must be 'fail_fast' or 'continue'");
  const maxConcurrent = b.max_concurrent ?? DEFAULT_MAX_CONCURRENT;
  if (typeof maxConcurrent !== "number" || !Number.isInteger(maxConcurrent) || maxConcurrent < 1 || maxConcurrent > MAX_CONCURRENT) {
    at("max_concurrent", `batch.max_concurrent must be an integer from 1 to ${MAX_CONCURRENT}`);
  }
  for (const key of Object.keys(b)) {
    if (!["items", "as", "error_handling", "max_concurrent"].includes(key)) at(key, `unknown field batch.${key}`);
  }
  if (issues.length > 0) return { settings: null, issues };
  return {
    settings: {
      items: b.items as string,
      as: as as string,
      errorHandling: errorHandling as BatchSettings["errorHandling"],
      maxConcurrent: maxConcurrent as number,
      maxItems,
    },
    issues,
  };
}

/**
 * Why a resolved `batch.items` cannot be run, or null: it must be a list of at most `maxItems`
 * elements (the deployment's MAX_ITEMS_PER_JOB: a batch is a job's worth of items), checked at
 * submission when it points into the inputs and again when it resolves at run time.
 */
export function batchItemsProblem(value: unknown, maxItems: number): string | null {
  if (!Array.isArray(value)) return `Batch items must be an array, got ${jsonTypeName(value)}`;
  if (value.length > maxItems) return `Batch items hold ${value.length} elements; a batch takes at most ${maxItems} (this deployment's MAX_ITEMS_PER_JOB)`;
  return null;
}

export interface ElementOutcome {
  item: unknown;
  success: boolean;
  output: unknown;
  error: string | null;
}

export interface BatchResult {
  results: unknown[];
  count: number;
  success_count: number;
  error_count: number;
  errors: { index: number; item: unknown; error: string }[] | null;
}

/** The step's value in the shared store, from its elements in input order (a failed element: null). */
export function batchResult(elements: ElementOutcome[]): BatchResult {
  const errors = elements.flatMap((e, index) => (e.success ? [] : [{ index, item: e.item, error: e.error ?? "failed" }]));
  return {
    results: elements.map((e) => (e.success ? e.output : null)),
    count: elements.length,
    success_count: elements.length - errors.length,
    error_count: errors.length,
    errors: errors.length > 0 ? errors : null,
  };
}
