/**
 * Batch nodes of a pipeline (v2 contract; reference: batch-node spec): the submission checks with
 * the contract's exact messages, the run-time check of what `batch.items` resolved to, and the
 * step's result in the shared store.
 */
import type { FieldIssue } from "../../lib/errors";
import { IDENTIFIER, isReference, jsonTypeName } from "./refs";

export const DEFAULT_MAX_CONCURRENT = 16;
export const MAX_CONCURRENT = 128;

export interface BatchSettings {
  items: string;
  as: string;
  errorHandling: "fail_fast" | "continue";
  maxConcurrent: number;
}

/** Checks a step's `batch` object as submitted; `path` is the step's, e.g. `steps[2]`. */
export function checkBatch(batch: unknown, path: string): { settings: BatchSettings | null; issues: FieldIssue[] } {
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
  if (typeof as !== "string" || !IDENTIFIER.test(as)) at("as", "batch.as must be a valid identifier");
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
    settings: { items: b.items as string, as: as as string, errorHandling: errorHandling as BatchSettings["errorHandling"], maxConcurrent: maxConcurrent as number },
    issues,
  };
}

/** Why a resolved `batch.items` cannot be iterated, or null when it is a list. */
export function batchItemsProblem(value: unknown): string | null {
  return Array.isArray(value) ? null : `Batch items must be an array, got ${jsonTypeName(value)}`;
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
