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
 *
 * A step whose type is an operator (filter, classify, rank, resolve) runs that operator's plan
 * under its path (./operator-run.ts); the shared store's reading is ./shared-store.ts.
 */
import { outputBound } from "../../engine/estimate";
import { newId } from "../../lib/ids";
import { taskResultBase } from "../../engine/task-result";
import type { Advance, Operator, PlanReader, TaskResult, TaskSeed, TaskView } from "../../engine/types";
import { stageTooLarge } from "../../engine/limits";
import { entries, foldResult, foldTasks, foldVars, releaseReduction, type FoldStages } from "../fold";
import { batchItemsProblem, batchResult } from "./batch";
import { stepVariables } from "./context";
import { resolveRef } from "./refs";
import type { Unit } from "./steps";
import { subOperator, subStages } from "./sub-plan";
import { subStageName } from "./stage-names";
import { fail, finishStep, innerStage, inputStage, locate, ownInputs, resolveIn, STEPS, storeBefore, unitStages, type PipelineJobSpec } from "./shared-store";
import { operatorEstimate, operatorOf, progressOperator, releaseOperator, subReader, withOperators } from "./operator-run";

export { STEPS, type PipelineJobSpec } from "./shared-store";

/** A reduce step's fold (../fold.ts): its inner tasks' stage and its own. */
const foldOf = (unit: Unit): FoldStages => ({ inner: unit.reduce?.inner ? innerStage(unit) : null, reduction: unit.path });

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
  if (unit.operator) return releaseOperator(spec, reader, unit, store);
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
    const seeds = foldTasks(foldOf(unit), list);
    const totals = { [unit.path]: list.length, ...(unit.reduce.inner ? { [innerStage(unit)]: list.length } : {}) };
    if (unit.reduce.inner) return { ready: seeds, totals };
    // Without inner tasks, reduction 0 has all it needs now (nothing else would release it).
    const first = list[0] as { name: string; value: unknown };
    const input = { name: first.name, original_input: first.value, accumulator: unit.reduce.initialValue, current_result: first.value };
    return { ready: [{ ...(seeds[0] as TaskSeed), input, blocked: false }, ...seeds.slice(1)], totals };
  }
  return { ready: [{ stage: unit.path, index: 0, input: null, sessionId: unit.agent ? newId("ses") : null }], totals: { [unit.path]: 1 } };
}

/** A batch element's task: an agent step's gets its own sub-session. */
const element = (unit: Unit, index: number, item: unknown): TaskSeed => ({
  stage: unit.path,
  index,
  input: { item },
  sessionId: unit.agent ? newId("ses") : null,
});

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
    const elements = reader
      .done(unit.path)
      .map((t) => ({ item: (t.input as { item: unknown }).item, success: t.success === true, output: t.output, error: t.error }));
    return finishStep(spec, reader, unit, batchResult(elements));
  }
  const { store } = storeBefore(spec, reader, spec.units.indexOf(unit));
  const items = resolveIn(store, batch.ref);
  const list = items.ok && Array.isArray(items.value) ? items.value : [];
  const room = Math.min(batch.maxConcurrent - inFlight, stage.total - out);
  const ready = Array.from({ length: Math.max(0, room) }, (_, k) => element(unit, out + k, list[out + k]));
  return { ready };
}

function progressReduce(spec: PipelineJobSpec, reader: PlanReader, unit: Unit): Advance {
  const stage = reader.stage(unit.path);
  if (!stage) return { ready: [] };
  if (stage.completed === stage.total && stage.failed === 0) {
    return finishStep(spec, reader, unit, reader.task(unit.path, stage.total - 1)?.output);
  }
  let k = 0;
  while (k < stage.total && reader.task(unit.path, k)?.state === "done") k++;
  return { ready: k < stage.total ? releaseReduction(foldOf(unit), unit.reduce?.initialValue ?? null, reader, k) : [] };
}

/** Where a step stands; what comes next for it. */
function progress(spec: PipelineJobSpec, reader: PlanReader, unit: Unit): Advance {
  if (unit.operator) return progressOperator(spec, reader, unit, null);
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
  // An operator step's failed tasks are its operator's to count (a filter's failed items): never the step's failure.
  if (part === "sub") return progressOperator(spec, reader, step, { ...trigger, stage: locate(spec, trigger.stage).sub as string });
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

/** What the outputs of the steps before `ordinal` can add to a prompt: their max_tokens. */
function boundBefore(spec: PipelineJobSpec, ordinal: number): number {
  return spec.units.slice(0, ordinal).reduce((n, u) => n + outputBound((u.call ?? u.agent ?? u.reduce?.reduction)?.maxTokens ?? null), 0);
}

/** The plan before anything ran: what the first step's tasks read. */
const NOTHING_FINISHED: PlanReader = {
  task: () => undefined,
  extent: () => 0,
  open: () => 0,
  done: () => [],
  stage: () => undefined,
  keyed: () => [],
  outputs: () => new Map(),
};

export const pipelineOperator: Operator<PipelineJobSpec> = {
  v1: false,
  startedFields: { type: "pipeline" },
  mainStage: () => STEPS,
  plan: (spec) => {
    // Every stage of a step says so (`step`: its path), whatever its name: the step list groups by it.
    const stages = spec.units.flatMap((unit) =>
      [
        ...(unit.operator ? subStages(spec, unit.operator).map((s) => ({ ...s, name: subStageName(unit.path, s.name), total: 0 })) : []),
        ...unit.inputTasks.map((t) => ({ name: inputStage(unit, t.name), total: 0 })),
        ...(unit.reduce?.inner ? [{ name: innerStage(unit), total: 0 }] : []),
        ...(unit.operator ? [] : [{ name: unit.path, total: 0 }]), // an operator step's stages are its operator's
      ].map((stage) => ({ ...stage, step: unit.path })),
    );
    return { stages: [...stages, { name: STEPS, total: spec.units.length }], tasks: [] };
  },
  advance,
  // An llm step's own calls (each element of its batch too): its own execution mode, else the pipeline's.
  batchable: (spec, stage) => {
    if (stage === STEPS) return false;
    const { unit, part, sub } = locate(spec, stage);
    if (part === "sub" && unit?.operator) {
      // The operator's batchable stages, when the step's execution (its own, else the pipeline's) asks for batches.
      const op = subOperator(spec, unit.operator);
      const mode = op.spec.execution?.mode;
      return (mode === "batch" || mode === "auto") && (op.step.operator.batchable?.(op.spec, sub as string) ?? false);
    }
    if (part !== "main" || !unit?.call) return false;
    const mode = (unit.execution ?? spec.executionDefault)?.mode;
    return mode === "batch" || mode === "auto";
  },
  work: (spec, stage) => {
    const { unit, part, input, sub } = locate(spec, stage);
    if (part === "steps") throw new Error("the stage steps has no model call: the operator finishes its tasks");
    const u = unit as Unit;
    if (part === "sub" && u.operator) {
      const op = subOperator(spec, u.operator);
      return op.step.operator.work(op.spec, sub as string);
    }
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
    if (part === "sub" && u.operator) {
      // The operator's own variables (item, item_a, …) over the store's names its templates read.
      const op = subOperator(spec, u.operator);
      return { ...base, ...op.step.operator.vars(op.spec, { ...task, stage: locate(spec, task.stage).sub as string }, subReader(spec, reader, u)) };
    }
    if (u.batch) return { ...base, [u.batch.as]: (task.input as { item: unknown }).item };
    if (u.reduce) {
      return { ...base, ...foldVars(part === "inner", task) };
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
    if (frontier >= 0 || ofFinished.length === 0) return withOperators(spec, reader, tasks, { rerun: [], drop: [], skip: ofFinished });
    const first = Math.min(...ofFinished.map((t) => spec.units.indexOf(locate(spec, t.stage).unit as Unit)));
    const later = spec.units.slice(first + 1);
    return withOperators(spec, reader, tasks, {
      rerun: spec.units.slice(first).map((u) => ({ stage: STEPS, index: spec.units.indexOf(u) })),
      drop: later.flatMap((u) => unitStages(spec, u)),
    });
  },
  estimateTasks: (spec) => {
    // Each call once; a batch or reduce step over the pipeline's inputs by its size there, else once.
    // The first step runs on the inputs alone: its prompts are known (exact), and the response cache may answer them.
    const tasks = spec.units.flatMap((unit, ordinal) => {
      if (unit.operator) return operatorEstimate(spec, unit, ordinal);
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
    return { tasks, note: "a batch, reduce or operator step over an earlier step's output is counted once, for one item (its size is known when it runs)" };
  },
  estimateVars: (spec, task) => {
    const input = task.input as { ordinal: number; known?: true; item?: unknown; sub?: { input: unknown; known: boolean } };
    if (input.sub) {
      // An operator step's task: its operator's variables from the task's own input (the list's item when it is the pipeline's inputs, else null).
      const run = { stage: task.stage, index: task.index, input: input.sub.input };
      if (input.sub.known) return { vars: pipelineOperator.vars(spec, run, NOTHING_FINISHED), boundTokens: 0 };
      const unit = locate(spec, task.stage).unit as Unit;
      const op = subOperator(spec, operatorOf(unit));
      const vars = op.step.operator.vars(op.spec, { ...run, stage: locate(spec, task.stage).sub as string }, NOTHING_FINISHED);
      return { vars: { ...spec.inputs, ...vars }, boundTokens: boundBefore(spec, input.ordinal) };
    }
    // The first step's tasks: the vars they will run with (nothing has finished before them).
    if (input.known)
      return {
        vars: pipelineOperator.vars(spec, { stage: task.stage, index: task.index, input: "item" in input ? { item: input.item } : null }, NOTHING_FINISHED),
        boundTokens: 0,
      };
    // Later steps see earlier outputs: bounded by those steps' max_tokens.
    return { vars: spec.inputs, boundTokens: boundBefore(spec, input.ordinal) }; // one object for every task: rendered once per template (engine/estimate-job.ts)
  },
  result: (spec, task, finish): TaskResult => {
    if (task.stage === STEPS) {
      const marker = task.input as { step: string; usage: unknown };
      return { index: task.index, success: true, step: marker.step, status: "completed", output: finish.output, usage: marker.usage };
    }
    const { unit, part, sub } = locate(spec, task.stage);
    if (part === "sub" && unit?.operator) {
      const op = subOperator(spec, unit.operator);
      const result = op.step.operator.result(op.spec, { ...task, stage: sub as string }, finish);
      return "stage" in result ? { ...result, stage: task.stage } : result;
    }
    // An agent's result: its session's fields (turns, stop_reason, …) over the common ones.
    const base =
      unit?.agent && part === "main"
        ? { ...taskResultBase(task, finish), session_id: finish.sessionId, ...finish.details, success: finish.success }
        : taskResultBase(task, finish);
    if (unit?.reduce && part !== "inputs") {
      return foldResult(part !== "main", task, base, finish);
    }
    return task.input !== null && typeof task.input === "object" && "item" in task.input ? { ...base, item: (task.input as { item: unknown }).item } : base;
  },
};
