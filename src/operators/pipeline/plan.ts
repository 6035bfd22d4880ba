/**
 * The pipeline operator's plan (v2 contract, "POST /v1/pipelines"). Each leaf step is a stage
 * named by its id path (`outer.inner` inside a sequential step; its id at the top level); each
 * input task of a step is the stage `<path>.input.<name>` (its own call), a reduce step's inner
 * tasks `<path>.inner`. The stage `steps` holds one task per step, finished by the operator itself when the
 * step is over, with the step's value in the shared store as its output: what later steps read,
 * what `?stage=steps` lists, and what a recover goes on from. Steps run one after another; a
 * finished step's marker releases the next step (its input tasks first, in parallel).
 *
 * Batch steps release their elements `max_concurrent` at a time (more as each finishes), so
 * `fail_fast` stops new elements at the first failure and fails the step once those under way are
 * done. Every template variable is computed when a task is claimed, from the store as it was
 * before the step (the markers of earlier steps): nothing is copied into each task.
 */
import { outputBound } from "../../engine/estimate";
import { newId } from "../../lib/ids";
import { taskResultBase } from "../../engine/task-result";
import type { Advance, ExecutionSpec, JobEnd, JobError, JobSpecBase, Operator, PlanReader, TaskResult, TaskSeed, TaskView } from "../../engine/types";
import { stageTooLarge } from "../../engine/limits";
import { entries } from "../reduce/plan";
import { batchItemsProblem, batchResult } from "./batch";
import { accumulatedEntry, stepVariables, type FinishedStep } from "./context";
import { resolveRef, type Ref } from "./refs";
import type { Binding, Unit } from "./steps";

export interface PipelineJobSpec extends JobSpecBase {
  type: "pipeline";
  inputs: Record<string, unknown>;
  units: Unit[];
  format: "notes_only" | "full_output"; // the pipeline's accumulation format: a failure's partial output
  /** The request's own `execution` (its llm steps' default); `execution` is the job's: this, or the first llm step's that asks for batches. */
  executionDefault?: ExecutionSpec | null;
}

export const STEPS = "steps";
const inputStage = (u: Unit, name: string) => `${u.path}.input.${name}`;
const innerStage = (u: Unit) => `${u.path}.inner`;
const CRITICAL = 0;
const AHEAD = 1;

type Part = "main" | "inputs" | "inner" | "steps";
interface EntryInput {
  name: string;
  original_input: unknown;
  accumulator?: unknown;
  current_result?: unknown;
}

type Location = { unit: Unit | null; part: Part; input?: number };
const locations = new WeakMap<PipelineJobSpec, Map<string, Location>>();
function locate(spec: PipelineJobSpec, stage: string): Location {
  let map = locations.get(spec);
  if (!map) {
    map = new Map<string, Location>([[STEPS, { unit: null, part: "steps" }]]);
    for (const unit of spec.units) {
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

/** The shared store before step `ordinal`, and the finished steps in order (their markers). */
function storeBefore(spec: PipelineJobSpec, reader: PlanReader, ordinal: number): { store: Record<string, unknown>; finished: FinishedStep[] } {
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

type Resolved = { ok: true; value: unknown } | { ok: false; message: string };

function resolveIn(store: Record<string, unknown>, ref: Ref): Resolved {
  const found = resolveRef(store, ref);
  return found.found ? { ok: true, value: found.value } : { ok: false, message: `nothing at ${found.at}` };
}

/** A step's own inputs: references resolved, literals, input tasks' outputs. */
function ownInputs(unit: Unit | { bindings: Record<string, Binding> }, store: Record<string, unknown>, taskOutput: (i: number) => unknown): Resolved & { inputs?: Record<string, unknown> } {
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

function fail(spec: PipelineJobSpec, reader: PlanReader, unit: Unit, stage: string, index: number | null, message: string, error: Partial<JobError> = {}): Advance {
  const { finished } = storeBefore(spec, reader, spec.units.indexOf(unit));
  const end: JobEnd = {
    status: "failed",
    output: { failed_step: unit.path, accumulated: finished.map((f) => accumulatedEntry(f, spec.format)) },
    error: { code: "step_failed", message, stage, index, step: unit.path, ...error },
  };
  return { ready: [], end };
}

/** The step is over: its marker (with its value) is recorded by the engine, which releases the next step. */
function finishStep(spec: PipelineJobSpec, reader: PlanReader, unit: Unit, value: unknown): Advance {
  const usage = { input_tokens: 0, output_tokens: 0 };
  for (const stage of [unit.path, innerStage(unit), ...unit.inputTasks.map((t) => inputStage(unit, t.name))]) {
    const row = reader.stage(stage);
    usage.input_tokens += row?.input_tokens ?? 0;
    usage.output_tokens += row?.output_tokens ?? 0;
  }
  const index = spec.units.indexOf(unit);
  return { ready: [], local: [{ stage: STEPS, index, input: { step: unit.path, usage }, output: value }] };
}

/** Starts a step: its input tasks, or the step itself. */
function releaseStep(spec: PipelineJobSpec, reader: PlanReader, unit: Unit): Advance {
  const { store } = storeBefore(spec, reader, spec.units.indexOf(unit));
  const own = ownInputs(unit, store, () => null);
  if (!own.ok) return fail(spec, reader, unit, unit.path, null, own.message);
  if (unit.inputTasks.length === 0) return releaseMain(spec, reader, unit, store);
  const ready = unit.inputTasks.map((task) => ({ stage: inputStage(unit, task.name), index: 0, input: { name: task.name } }));
  return { ready, totals: Object.fromEntries(unit.inputTasks.map((task) => [inputStage(unit, task.name), 1])) };
}

function releaseMain(spec: PipelineJobSpec, reader: PlanReader, unit: Unit, store = storeBefore(spec, reader, spec.units.indexOf(unit)).store): Advance {
  if (unit.batch) {
    const items = resolveIn(store, unit.batch.ref);
    if (!items.ok) return fail(spec, reader, unit, unit.path, null, `batch.items: ${items.message}`);
    const maxItems = unit.batch.maxItems ?? Number.POSITIVE_INFINITY; // specs stored before the bound have none
    const list = items.value as unknown[];
    if (Array.isArray(list) && list.length > maxItems) {
      const tooLarge = stageTooLarge(unit.path, list.length, maxItems, `The batch's elements (${unit.batch.items})`, unit.path);
      return fail(spec, reader, unit, unit.path, null, tooLarge.message, tooLarge);
    }
    const problem = batchItemsProblem(list, maxItems);
    if (problem) return fail(spec, reader, unit, unit.path, null, problem);
    if (list.length === 0) return finishStep(spec, reader, unit, batchResult([]));
    const ready = list.slice(0, unit.batch.maxConcurrent).map((item, index) => element(unit, index, item));
    return { ready, totals: { [unit.path]: list.length } };
  }
  if (unit.reduce) {
    const from = resolveIn(store, unit.reduce.from);
    if (!from.ok) return fail(spec, reader, unit, unit.path, null, `inputs_from: ${from.message}`);
    const value = from.value;
    if (typeof value !== "object" || value === null) return fail(spec, reader, unit, unit.path, null, "inputs_from must point at a list or an object");
    const list = entries(value as unknown[] | Record<string, unknown>);
    if (list.length === 0) return finishStep(spec, reader, unit, unit.reduce.initialValue);
    const seeds: TaskSeed[] = list.flatMap(({ name, value: v }, index) => {
      const entry: EntryInput = { name, original_input: v };
      const reduction: TaskSeed = { stage: unit.path, index, input: entry, blocked: true, priority: CRITICAL };
      return unit.reduce?.inner ? [{ stage: innerStage(unit), index, input: entry, priority: AHEAD }, reduction] : [reduction];
    });
    const totals = { [unit.path]: list.length, ...(unit.reduce.inner ? { [innerStage(unit)]: list.length } : {}) };
    if (unit.reduce.inner) return { ready: seeds, totals };
    // Without inner tasks, reduction 0 has all it needs now (nothing else would release it).
    const first = list[0] as { name: string; value: unknown };
    const input: EntryInput = { name: first.name, original_input: first.value, accumulator: unit.reduce.initialValue, current_result: first.value };
    return { ready: [{ stage: unit.path, index: 0, input, priority: CRITICAL }, ...seeds.slice(1)], totals };
  }
  return { ready: [{ stage: unit.path, index: 0, input: null, sessionId: unit.agent ? newId("ses") : null }], totals: { [unit.path]: 1 } };
}

/** A batch element's task: an agent step's gets its own sub-session. */
const element = (unit: Unit, index: number, item: unknown): TaskSeed => ({ stage: unit.path, index, input: { item }, sessionId: unit.agent ? newId("ses") : null });

/**
 * A batch step after one of its elements ended: the next elements to release (up to max_concurrent
 * under way), or the step's end. `out`: how many it released (in index order, each inserted as it is).
 */
function progressBatch(spec: PipelineJobSpec, reader: PlanReader, unit: Unit, out: number): Advance {
  const batch = unit.batch as NonNullable<Unit["batch"]>;
  const stage = reader.stage(unit.path);
  if (!stage) return { ready: [] };
  const inFlight = out - stage.completed;
  if (batch.errorHandling === "fail_fast" && stage.failed > 0) {
    if (inFlight > 0) return { ready: [] }; // those under way finish; no new element starts
    const first = reader.done(unit.path).find((t) => t.success === false) as TaskView;
    return fail(spec, reader, unit, unit.path, first.index, `element ${first.index} failed: ${first.error ?? "failed"}`);
  }
  if (stage.completed === stage.total) {
    const elements = reader.done(unit.path).map((t) => ({ item: (t.input as { item: unknown }).item, success: t.success === true, output: t.output, error: t.error }));
    return finishStep(spec, reader, unit, batchResult(elements));
  }
  const { store } = storeBefore(spec, reader, spec.units.indexOf(unit));
  const items = resolveIn(store, batch.ref);
  const list = items.ok && Array.isArray(items.value) ? items.value : [];
  const room = Math.min(batch.maxConcurrent - inFlight, stage.total - out);
  const ready = Array.from({ length: Math.max(0, room) }, (_, k) => element(unit, out + k, list[out + k]));
  return { ready };
}

/** Reduction k of a reduce step, released once inner k and reduction k−1 are done. */
function releaseReduction(unit: Unit, reader: PlanReader, k: number): TaskSeed[] {
  const reduce = unit.reduce as NonNullable<Unit["reduce"]>;
  const task = reader.task(unit.path, k);
  if (!task || task.state !== "blocked") return [];
  const entry = task.input as EntryInput;
  let current: unknown = entry.original_input;
  if (reduce.inner) {
    const inner = reader.task(innerStage(unit), k);
    if (inner?.state !== "done" || !inner.success) return [];
    current = inner.output;
  }
  let accumulator = reduce.initialValue;
  if (k > 0) {
    const previous = reader.task(unit.path, k - 1);
    if (previous?.state !== "done" || !previous.success) return [];
    accumulator = previous.output;
  }
  return [{ stage: unit.path, index: k, input: { ...entry, accumulator, current_result: current }, priority: CRITICAL }];
}

function progressReduce(spec: PipelineJobSpec, reader: PlanReader, unit: Unit): Advance {
  const stage = reader.stage(unit.path);
  if (!stage) return { ready: [] };
  if (stage.completed === stage.total && stage.failed === 0) {
    return finishStep(spec, reader, unit, reader.task(unit.path, stage.total - 1)?.output);
  }
  let k = 0;
  while (k < stage.total && reader.task(unit.path, k)?.state === "done") k++;
  return { ready: k < stage.total ? releaseReduction(unit, reader, k) : [] };
}

/** Where a step stands; what comes next for it. */
function progress(spec: PipelineJobSpec, reader: PlanReader, unit: Unit): Advance {
  if (unit.inputTasks.length > 0 && !reader.task(unit.path, 0) && !reader.task(innerStage(unit), 0)) {
    const inputs = unit.inputTasks.map((t) => reader.task(inputStage(unit, t.name), 0));
    if (inputs.every((t) => !t)) return releaseStep(spec, reader, unit);
    return inputs.every((t) => t?.state === "done" && t.success) ? releaseMain(spec, reader, unit) : { ready: [] };
  }
  const released = reader.extent(unit.path);
  if (released === 0) return releaseMain(spec, reader, unit); // inputs done (or none): the step itself
  if (unit.batch) return progressBatch(spec, reader, unit, released);
  if (unit.reduce) return progressReduce(spec, reader, unit);
  const task = reader.task(unit.path, 0) as TaskView;
  return task.state === "done" && task.success ? finishStep(spec, reader, unit, task.output) : { ready: [] };
}

/** The first step not finished: start it or go on with it (start, recover, resume). */
function frontier(spec: PipelineJobSpec, reader: PlanReader): Advance {
  const next = spec.units.findIndex((_, i) => reader.task(STEPS, i)?.state !== "done");
  if (next < 0) return { ready: [], end: { status: "completed", output: reader.task(STEPS, spec.units.length - 1)?.output ?? null, error: null } };
  return progress(spec, reader, spec.units[next] as Unit);
}

function advance(spec: PipelineJobSpec, reader: PlanReader, trigger: TaskView | null): Advance {
  if (trigger === null) return frontier(spec, reader);
  const { unit, part } = locate(spec, trigger.stage);
  if (part === "steps") {
    const next = spec.units[trigger.index + 1];
    if (!next) return { ready: [], end: { status: "completed", output: trigger.output, error: null } };
    return releaseStep(spec, reader, next);
  }
  const step = unit as Unit;
  if (trigger.success === false) {
    const tolerated = part === "main" && step.batch !== null; // continue: recorded; fail_fast: decided when those under way are done
    if (!tolerated) return fail(spec, reader, step, trigger.stage, step.batch || step.reduce ? trigger.index : null, trigger.error ?? "the task failed");
  }
  return progress(spec, reader, step);
}

/** A step's own inputs as its template sees them: references resolved, literals, its input tasks' outputs. */
function stepInputs(reader: PlanReader, unit: Unit, store: Record<string, unknown>): Record<string, unknown> {
  return ownInputs(unit, store, (i) => reader.task(inputStage(unit, unit.inputTasks[i]?.name ?? ""), 0)?.output ?? null).inputs ?? {};
}

/** The plan before anything ran: what the first step's tasks read. */
const NOTHING_FINISHED: PlanReader = { task: () => undefined, extent: () => 0, open: () => 0, done: () => [], stage: () => undefined };

export const pipelineOperator: Operator<PipelineJobSpec> = {
  v1: false,
  startedFields: { type: "pipeline" },
  mainStage: () => STEPS,
  plan: (spec) => {
    const stages = spec.units.flatMap((unit) => [
      ...unit.inputTasks.map((t) => ({ name: inputStage(unit, t.name), total: 0 })),
      ...(unit.reduce?.inner ? [{ name: innerStage(unit), total: 0 }] : []),
      { name: unit.path, total: 0 },
    ]);
    return { stages: [...stages, { name: STEPS, total: spec.units.length }], tasks: [] };
  },
  advance,
  // An llm step's own calls (each element of its batch too): its own execution mode, else the pipeline's.
  batchable: (spec, stage) => {
    if (stage === STEPS) return false;
    const { unit, part } = locate(spec, stage);
    if (part !== "main" || !unit?.call) return false;
    const mode = (unit.execution ?? spec.executionDefault)?.mode;
    return mode === "batch" || mode === "auto";
  },
  work: (spec, stage) => {
    const { unit, part, input } = locate(spec, stage);
    const u = unit as Unit;
    if (part === "main" && u.agent) return { kind: "agent", tenantId: spec.tenantId, agent: u.agent };
    const call = part === "inputs" ? u.inputTasks[input ?? 0]?.call : part === "inner" ? u.reduce?.inner : (u.call ?? u.reduce?.reduction);
    if (!call) throw new Error(`the stage ${stage} has no model call`);
    return { kind: "call", tenantId: spec.tenantId, call };
  },
  vars: (spec, task, reader) => {
    if (!reader) throw new Error("pipeline tasks read the shared store");
    const { unit, part, input: which } = locate(spec, task.stage);
    const u = unit as Unit;
    const { store, finished } = storeBefore(spec, reader, spec.units.indexOf(u));
    if (part === "inputs") {
      const input = u.inputTasks[which ?? 0];
      if (!input) return {};
      const ownOfTask = ownInputs(input, store, () => null).inputs ?? {};
      return stepVariables(input.context, store, ownOfTask, finished, input.reads);
    }
    const base = stepVariables(u.context, store, stepInputs(reader, u, store), finished, u.reads);
    if (u.batch) return { ...base, [u.batch.as]: (task.input as { item: unknown }).item };
    if (u.reduce) {
      const entry = task.input as EntryInput;
      if (part === "inner") return { ...base, item: entry.original_input, name: entry.name, index: task.index };
      return { ...base, accumulator: entry.accumulator, current_result: entry.current_result, original_input: entry.original_input, name: entry.name, index: task.index };
    }
    return base;
  },
  // A pipeline that failed (or was cancelled) goes on from that step: failures of finished steps
  // (elements of a `continue` batch) stay as they are. One that completed re-runs those elements,
  // then every step after theirs (planned anew: they read the step's new value).
  redoAfter: (spec, reader, tasks) => {
    const finished = (t: { stage: string }) => {
      const unit = locate(spec, t.stage).unit;
      return unit !== null && reader.task(STEPS, spec.units.indexOf(unit))?.state === "done";
    };
    const ofFinished = tasks.filter((t) => t.stage !== STEPS && finished(t));
    const frontier = spec.units.findIndex((_, i) => reader.task(STEPS, i)?.state !== "done");
    if (frontier >= 0 || ofFinished.length === 0) return { rerun: [], drop: [], skip: ofFinished };
    const first = Math.min(...ofFinished.map((t) => spec.units.indexOf(locate(spec, t.stage).unit as Unit)));
    const later = spec.units.slice(first + 1);
    return {
      rerun: spec.units.slice(first).map((u) => ({ stage: STEPS, index: spec.units.indexOf(u) })),
      drop: later.flatMap((u) => [u.path, innerStage(u), ...u.inputTasks.map((t) => inputStage(u, t.name))]),
    };
  },
  estimateTasks: (spec) => {
    // Each call once; a batch or reduce step over the pipeline's inputs by its size there, else once.
    // The first step runs on the inputs alone: its prompts are known (exact), and the response cache may answer them.
    const tasks = spec.units.flatMap((unit, ordinal) => {
      const sized = unit.batch?.ref ?? unit.reduce?.from;
      const resolved = sized && Object.hasOwn(spec.inputs, sized.name) ? resolveRef(spec.inputs, sized) : null;
      const value = resolved?.found ? resolved.value : null;
      const n = typeof value === "object" && value !== null ? Math.max(1, Object.keys(value).length) : 1;
      const known = ordinal === 0 && unit.call !== null && unit.inputTasks.length === 0 && unit.reduce === null;
      // An element's vars hold the list itself only if its template reads it: then one render stands for all (linear).
      const perElement = known && unit.batch !== null && Array.isArray(value) && !unit.reads.includes(unit.batch.ref.name);
      const main = Array.from({ length: n }, (_, index) =>
        perElement
          ? { stage: unit.path, index, input: { ordinal, known: true, item: (value as unknown[])[index] }, exact: true }
          : known && unit.batch === null
            ? { stage: unit.path, index, input: { ordinal, known: true }, exact: true }
            : { stage: unit.path, index, input: { ordinal } },
      );
      const inner = unit.reduce?.inner ? Array.from({ length: n }, (_, index) => ({ stage: innerStage(unit), index, input: { ordinal } })) : [];
      const inputs = unit.inputTasks.map((t) => ({ stage: inputStage(unit, t.name), index: 0, input: { ordinal } }));
      return [...inputs, ...inner, ...main];
    });
    return { tasks, note: "a batch or reduce step over an earlier step's output is counted once (its size is known when it runs)" };
  },
  estimateVars: (spec, task) => {
    const input = task.input as { ordinal: number; known?: true; item?: unknown };
    // The first step's tasks: the vars they will run with (nothing has finished before them).
    if (input.known) return { vars: pipelineOperator.vars(spec, { stage: task.stage, index: task.index, input: "item" in input ? { item: input.item } : null }, NOTHING_FINISHED), boundTokens: 0 };
    // Later steps see earlier outputs: bounded by those steps' max_tokens.
    const bound = spec.units.slice(0, input.ordinal).reduce((n, u) => n + outputBound((u.call ?? u.agent ?? u.reduce?.reduction)?.maxTokens ?? null), 0);
    return { vars: spec.inputs, boundTokens: bound }; // one object for every task: rendered once per template (engine/estimate-job.ts)
  },
  result: (spec, task, finish): TaskResult => {
    if (task.stage === STEPS) {
      const marker = task.input as { step: string; usage: unknown };
      return { index: task.index, success: true, step: marker.step, status: "completed", output: finish.output, usage: marker.usage };
    }
    const { unit, part } = locate(spec, task.stage);
    // An agent's result: its session's fields (turns, stop_reason, …) over the common ones.
    const base = unit?.agent && part === "main" ? { ...taskResultBase(task, finish), session_id: finish.sessionId, ...finish.details, success: finish.success } : taskResultBase(task, finish);
    if (unit?.reduce && part !== "inputs") {
      const entry = task.input as EntryInput;
      return part === "main" ? { ...base, name: entry.name, accumulator: finish.success ? finish.output : (entry.accumulator ?? null) } : { ...base, name: entry.name };
    }
    return task.input !== null && typeof task.input === "object" && "item" in task.input ? { ...base, item: (task.input as { item: unknown }).item } : base;
  },
};
