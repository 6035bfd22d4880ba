/**
 * Recover and resume, the coordinator's side: the options a recover may change, and the answers
 * the coordinator gives (domain results; the route turns a refusal into 404 or 409).
 */
import type { BudgetSpec, ErrorKind } from "./types";
import type { JobSpecBase } from "./types";

/** New budget limits (a resume's or a recover's `token_budget`): the ones given replace the job's. */
export interface BudgetChange {
  total?: number;
  usd?: number;
}

export interface RecoverOptions {
  model: string | null;
  maxRetries: number | null;
  timeoutMs: number | null;
  errorKinds: ErrorKind[] | null;
  budget: BudgetChange | null;
}

/** The budget with the limits a change gives (a job without a budget gets one of just those). */
export function withBudgetChange(budget: BudgetSpec | null, change: BudgetChange | null): BudgetSpec | null {
  if (!change) return budget;
  const base: BudgetSpec = budget ?? { total: null, usd: null, onExhausted: "pause" };
  return { ...base, ...(change.total !== undefined ? { total: change.total } : {}), ...(change.usd !== undefined ? { usd: change.usd } : {}) };
}

export type RecoverAnswer = { ok: true; recovering: number } | { ok: false; reason: string };
export type ResumeAnswer = { ok: true } | { ok: false; reason: string; details?: { path: string; message: string }[] };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The spec with a recover's overrides: the job's retries and budget, and the model and timeout of
 * every call or agent it holds (any object with a `promptTemplate`), whatever the operator.
 */
export function withOverrides<S extends JobSpecBase>(spec: S, o: RecoverOptions): S {
  const patch = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(patch);
    if (!isRecord(value)) return value;
    const out: Record<string, unknown> = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, patch(v)]));
    if ("promptTemplate" in out) {
      if (o.model !== null) out.model = o.model;
      if (o.timeoutMs !== null) out.timeoutMs = o.timeoutMs;
      if (o.maxRetries !== null && "maxTurns" in out) out.maxRetries = o.maxRetries;
    }
    return out;
  };
  const next = patch(spec) as S;
  if (o.model !== null) next.model = o.model;
  if (o.maxRetries !== null) next.maxRetries = o.maxRetries;
  next.budget = withBudgetChange(spec.budget, o.budget);
  return next;
}
