/**
 * Reading a step whose type is an operator (./operator-steps.ts): its list (`inputs_from`, a
 * reference), its own fields — the operator's request fields, checked by the operator's own schema
 * and submission — and, inherited from the pipeline, the fields it does not set (model,
 * system_prompt, timeout_secs, execution, …). The job's own fields (webhook, budget, concurrency,
 * retries, pacing, cache, metadata) are the pipeline's alone: a step that sets one is refused.
 * Every problem is at the step's path (`steps[2].cascade.reject_below`).
 */
import { ApiError, InputError, type FieldIssue } from "../../lib/errors";
import { baseSpec } from "../../jobs/submit";
import type { JobSpecBase } from "../../engine/types";
import type { OperatorStep } from "../operator-step";
import type { TaskDefaults } from "../task-call";

/** A step's own fields that are not the operator's: the pipeline's step fields. */
export const STEP_FIELDS = ["id", "type", "context_management", "inputs", "inputs_from"];
/** The job's fields: a step runs under the pipeline's. */
export const JOB_FIELDS = new Set([
  "inputs",
  "webhook",
  "metadata",
  "token_budget",
  "concurrency",
  "max_retries",
  "max_wait_secs",
  "rate_limit",
  "retry_guidance",
  "cache",
  "prompt_cache",
]);

/** A step's own fields: the pipeline's, with its list fields (`inputs_from`, or a join's `left_from` and `right_from`). */
export function stepKeys(step: OperatorStep): string[] {
  return step.lists ? [...STEP_FIELDS.filter((f) => f !== "inputs_from"), ...Object.keys(step.lists)] : STEP_FIELDS;
}

/** The operator's fields a step of it may set (not the job's, nor the lists its list fields stand for). */
export function ownFields(step: OperatorStep): string[] {
  const lists = new Set(Object.values(step.lists ?? {}));
  return Object.keys(step.schema.shape).filter((key) => !JOB_FIELDS.has(key) && !lists.has(key));
}

/** Field problems of the step's keys: job fields and unknown ones. */
export function fieldIssues(step: OperatorStep, raw: Record<string, unknown>, path: string): FieldIssue[] {
  const own = new Set(ownFields(step));
  const fields = stepKeys(step);
  return Object.keys(raw).flatMap((key) => {
    if (fields.includes(key) || own.has(key)) return [];
    const message = JOB_FIELDS.has(key)
      ? `${key} is the job's: set it on the pipeline (its steps run under it)`
      : key === "batch"
        ? "batch is for llm and agent steps (an operator step runs over its whole list)"
        : "unknown field for this step type";
    return [{ path: `${path}.${key}`, message }];
  });
}

/** An error of the operator's checks, said at the step's path. */
export function atStep(err: unknown, path: string): unknown {
  const prefix = (issues: FieldIssue[]) => issues.map((i) => ({ path: `${path}.${i.path}`, message: i.message }));
  if (err instanceof InputError) return new InputError(err.code, `${path}: ${err.message}`, prefix(err.details));
  if (err instanceof ApiError) {
    const details = Array.isArray(err.details)
      ? prefix(err.details as FieldIssue[])
      : typeof err.details === "object" && err.details !== null
        ? { ...err.details, step: path }
        : err.details;
    return new ApiError(err.status, err.code, `${path}: ${err.message}`, { details, headers: err.headers });
  }
  return err;
}

/**
 * The operator's spec for the step: its fields over the pipeline's (those the operator takes),
 * parsed by the operator's schema and built by its submission's spec function. Field problems are
 * returned; the operator's own checks (templates, thresholds) throw at the step's path.
 */
export function operatorStepSpec(
  env: Env,
  defaults: TaskDefaults,
  step: OperatorStep,
  raw: Record<string, unknown>,
  path: string,
): { spec: JobSpecBase | null; issues: FieldIssue[] } {
  const shape = Object.keys(step.schema.shape);
  const inherited = Object.fromEntries(
    shape
      .filter((key) => key !== "inputs" && (defaults as unknown as Record<string, unknown>)[key] !== undefined)
      .map((key) => [key, (defaults as unknown as Record<string, unknown>)[key]]),
  );
  const fields = stepKeys(step);
  const own = Object.fromEntries(Object.entries(raw).filter(([key]) => !fields.includes(key)));
  const lists = Object.fromEntries(Object.values(step.lists ?? { inputs_from: "inputs" }).map((field) => [field, [null]])); // the lists come when the step runs
  const parsed = step.schema.safeParse({ ...inherited, ...own, ...lists });
  if (!parsed.success) return { spec: null, issues: parsed.error.issues.map((i) => ({ path: [path, ...i.path.map(String)].join("."), message: i.message })) };
  const body = parsed.data as Parameters<OperatorStep["spec"]>[1];
  try {
    // The job's fields are the pipeline's: the coordinator runs the step under the pipeline's spec.
    return { spec: step.spec(env, body, baseSpec("", "", body as never)), issues: [] };
  } catch (err) {
    throw atStep(err, path);
  }
}
