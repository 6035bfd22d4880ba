/**
 * Context management of pipeline steps (v2 contract, "POST /v1/pipelines"): which variables a
 * step's template sees. Three dimensions, with defaults by step type, overridden by the
 * pipeline's `context_management` and then the step's own:
 * - `inherit_context`: `full` (the whole shared store), `none` (only the step's own inputs),
 *   `subset` (its inputs plus the names listed in `subset`);
 * - `accumulate_data`: when true the template also sees `accumulated`, one entry per earlier
 *   finished step, in order;
 * - `accumulation_format`: `notes_only` (`{step, notes}`: the output's string `notes` field, else
 *   its JSON text cut to 1,000 characters) or `full_output` (`{step, output}`).
 */
export type StepType = "sequential" | "llm" | "agent" | "reduce";

export interface ContextSettings {
  inherit_context?: "full" | "none" | "subset";
  accumulate_data?: boolean;
  accumulation_format?: "notes_only" | "full_output";
  subset?: string[];
}

export interface Context {
  inherit: "full" | "none" | "subset";
  accumulate: boolean;
  format: "notes_only" | "full_output";
  subset: string[];
}

const DEFAULTS: Record<StepType, Omit<Context, "subset">> = {
  sequential: { inherit: "full", accumulate: true, format: "notes_only" },
  llm: { inherit: "full", accumulate: false, format: "notes_only" },
  agent: { inherit: "full", accumulate: false, format: "notes_only" },
  reduce: { inherit: "none", accumulate: true, format: "notes_only" },
};

export const NOTES_MAX_CHARS = 1_000; // the contract's cut for notes taken from an output's JSON

export function effectiveContext(type: StepType, pipeline: ContextSettings | undefined, step: ContextSettings | undefined): Context {
  const base = DEFAULTS[type];
  const pick = <K extends keyof ContextSettings>(key: K): ContextSettings[K] | undefined => step?.[key] ?? pipeline?.[key];
  return {
    inherit: pick("inherit_context") ?? base.inherit,
    accumulate: pick("accumulate_data") ?? base.accumulate,
    format: pick("accumulation_format") ?? base.format,
    subset: pick("subset") ?? [],
  };
}

export interface FinishedStep {
  step: string;
  output: unknown;
}

export function accumulatedEntry(finished: FinishedStep, format: Context["format"]): Record<string, unknown> {
  if (format === "full_output") return { step: finished.step, output: finished.output };
  const o = finished.output;
  const notes =
    typeof o === "object" && o !== null && !Array.isArray(o) && typeof (o as { notes?: unknown }).notes === "string"
      ? (o as { notes: string }).notes
      : (JSON.stringify(o) ?? "null").slice(0, NOTES_MAX_CHARS);
  return { step: finished.step, notes };
}

/** The variables a step's template sees: the store as its context allows, its own inputs, and `accumulated`. */
export function stepVariables(
  context: Context,
  store: Record<string, unknown>,
  ownInputs: Record<string, unknown>,
  finished: FinishedStep[],
  reads?: readonly string[], // when known, the names the template reads: nothing else is copied
): Record<string, unknown> {
  const wanted = (n: string) => Object.hasOwn(store, n) && (!reads || reads.includes(n));
  const names = context.inherit === "full" ? Object.keys(store) : context.inherit === "subset" ? context.subset : [];
  const inherited = Object.fromEntries(names.filter(wanted).map((n) => [n, store[n]]));
  const vars: Record<string, unknown> = { ...inherited, ...ownInputs };
  if (context.accumulate && (!reads || reads.includes("accumulated"))) vars.accumulated = finished.map((f) => accumulatedEntry(f, context.format));
  return vars;
}
