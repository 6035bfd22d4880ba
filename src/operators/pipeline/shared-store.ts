/**
 * A pipeline's shared store as its plan reads it (./plan.ts): the spec, where each stage belongs
 * (a step's own stage, its input tasks', its inner tasks', an operator step's), the store before
 * a step (the earlier steps' markers), references resolved in it, and a step's two ends — its
 * failure (the job's) and its value (its marker).
 */
import type { Advance, ExecutionSpec, JobEnd, JobError, JobSpecBase, PlanReader } from "../../engine/types";
import { accumulatedEntry, type FinishedStep } from "./context";
import { resolveRef, type Ref } from "./refs";
import type { Binding, Unit } from "./steps";
import { subStages } from "./sub-plan";
import { subStageName } from "./stage-names";

export interface PipelineJobSpec extends JobSpecBase {
  type: "pipeline";
  inputs: Record<string, unknown>;
  units: Unit[];
  format: "notes_only" | "full_output"; // the pipeline's accumulation format: a failure's partial output
  /** The request's own `execution` (its llm steps' default); `execution` is the job's: this, or the first llm step's that asks for batches. */
  executionDefault?: ExecutionSpec | null;
}

export const STEPS = "steps";
export const inputStage = (u: Unit, name: string) => `${u.path}.input.${name}`;
export const innerStage = (u: Unit) => `${u.path}.inner`;
export type Part = "main" | "inputs" | "inner" | "steps" | "sub";
export type Location = { unit: Unit | null; part: Part; input?: number; sub?: string };
const locations = new WeakMap<PipelineJobSpec, Map<string, Location>>();
export function locate(spec: PipelineJobSpec, stage: string): Location {
  let map = locations.get(spec);
  if (!map) {
    map = new Map<string, Location>([[STEPS, { unit: null, part: "steps" }]]);
    for (const unit of spec.units) {
      for (const stage of unit.operator ? subStages(spec, unit.operator) : [])
        map.set(subStageName(unit.path, stage.name), { unit, part: "sub", sub: stage.name });
      map.set(unit.path, { unit, part: "main" });
      unit.inputTasks.forEach((task, input) => map?.set(inputStage(unit, task.name), { unit, part: "inputs", input }));
      map.set(innerStage(unit), { unit, part: "inner" });
    }
    locations.set(spec, map);
  }
  const found = map.get(stage);
  if (!found) throw new Error(`no step has the stage ${stage}`);
  return found;
}

/** Every stage of a step: its own, its input tasks', its inner tasks', an operator step's. */
export function unitStages(spec: PipelineJobSpec, u: Unit): string[] {
  const sub = u.operator ? subStages(spec, u.operator).map((s) => subStageName(u.path, s.name)) : [];
  return [u.path, innerStage(u), ...u.inputTasks.map((t) => inputStage(u, t.name)), ...sub];
}

/** The shared store before step `ordinal`, and the finished steps in order (their markers). */
export function storeBefore(spec: PipelineJobSpec, reader: PlanReader, ordinal: number): { store: Record<string, unknown>; finished: FinishedStep[] } {
  const store: Record<string, unknown> = { ...spec.inputs };
  const finished: FinishedStep[] = [];
  for (const unit of spec.units.slice(0, ordinal)) {
    const marker = reader.task(STEPS, spec.units.indexOf(unit));
    if (marker?.state !== "done") break;
    store[unit.id] = marker.output;
    for (const closed of unit.closes) store[closed] = marker.output;
    finished.push({ step: unit.id, output: marker.output });
  }
  return { store, finished };
}

export type Resolved = { ok: true; value: unknown } | { ok: false; message: string };

export function resolveIn(store: Record<string, unknown>, ref: Ref): Resolved {
  const found = resolveRef(store, ref);
  return found.found ? { ok: true, value: found.value } : { ok: false, message: `nothing at ${found.at}` };
}

/** A step's own inputs: references resolved, literals, input tasks' outputs. */
export function ownInputs(
  unit: Unit | { bindings: Record<string, Binding> },
  store: Record<string, unknown>,
  taskOutput: (i: number) => unknown,
): Resolved & { inputs?: Record<string, unknown> } {
  const inputs: Record<string, unknown> = {};
  for (const [name, binding] of Object.entries(unit.bindings)) {
    if (binding.kind === "literal") inputs[name] = binding.value;
    else if (binding.kind === "task") inputs[name] = taskOutput(binding.task);
    else {
      const r = resolveIn(store, binding.ref);
      if (!r.ok) return { ok: false, message: `input ${name}: ${r.message}` };
      inputs[name] = r.value;
    }
  }
  return { ok: true, value: null, inputs };
}

export function fail(
  spec: PipelineJobSpec,
  reader: PlanReader,
  unit: Unit,
  stage: string,
  index: number | null,
  message: string,
  error: Partial<JobError> = {},
): Advance {
  const { finished } = storeBefore(spec, reader, spec.units.indexOf(unit));
  const end: JobEnd = {
    status: "failed",
    output: { failed_step: unit.path, accumulated: finished.map((f) => accumulatedEntry(f, spec.format)) },
    error: { code: "step_failed", message, stage, index, step: unit.path, ...error },
  };
  return { ready: [], end };
}

/** The step is over: its marker (with its value) is recorded by the engine, which releases the next step. */
export function finishStep(spec: PipelineJobSpec, reader: PlanReader, unit: Unit, value: unknown): Advance {
  const usage = { input_tokens: 0, output_tokens: 0 };
  for (const stage of unitStages(spec, unit)) {
    const row = reader.stage(stage);
    usage.input_tokens += row?.input_tokens ?? 0;
    usage.output_tokens += row?.output_tokens ?? 0;
  }
  const index = spec.units.indexOf(unit);
  return { ready: [], local: [{ stage: STEPS, index, input: { step: unit.path, usage }, output: value }] };
}
