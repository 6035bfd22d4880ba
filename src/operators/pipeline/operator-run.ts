/**
 * Operator steps in the pipeline's plan (./operator-steps.ts, ./sub-plan.ts): the step's list
 * resolved and bounded, the operator's check of it, its start, what it says follows after each
 * of its tasks (its end is the step's value), what a recover of its tasks adds, and its tasks
 * in an estimate.
 */
import type { Advance, JobError, JobSpecBase, Operator, PlanReader, TaskSeed, TaskView } from "../../engine/types";
import { operatorStep } from "./operator-steps";
import { stageTooLarge } from "../../engine/limits";
import { resolveRef } from "./refs";
import type { Unit } from "./steps";
import { startSub, subOperator, subStages } from "./sub-plan";
import { inPipeline, named, SubReader } from "../nested-plan";
import { subStageName } from "./stage-names";
import { fail, finishStep, locate, resolveIn, STEPS, storeBefore, type PipelineJobSpec } from "./shared-store";

/** An operator step's operator (the plan asks only for units of operator steps). */
export function operatorOf(unit: Unit): NonNullable<Unit["operator"]> {
  if (!unit.operator) throw new Error(`the step ${unit.path} runs no operator`);
  return unit.operator;
}

/** An operator step's list (`inputs_from`; a step of two lists: its lists, as one list of them), or why it cannot run. */
function operatorItems(unit: Unit, store: Record<string, unknown>): { ok: true; items: unknown[] } | { ok: false; message: string; error?: Partial<JobError> } {
  const operator = operatorOf(unit);
  const fields = Object.keys(operatorStep(operator.type).lists ?? { inputs_from: "inputs" });
  const lists: unknown[][] = [];
  for (const [i, ref] of (operator.lists ?? [operator.from]).entries()) {
    const field = fields[i] ?? "inputs_from";
    const found = resolveIn(store, ref);
    if (!found.ok) return { ok: false, message: `${field}: ${found.message}` };
    if (!Array.isArray(found.value)) return { ok: false, message: `${field} must point at a list, got ${found.value === null ? "null" : typeof found.value}` };
    if (found.value.length > operator.maxItems) {
      const tooLarge = stageTooLarge(unit.path, found.value.length, operator.maxItems, `The list of ${operator.type} step ${unit.path}`, unit.path);
      return { ok: false, message: tooLarge.message, error: tooLarge };
    }
    lists.push(found.value);
  }
  return { ok: true, items: operator.lists ? lists : (lists[0] as unknown[]) };
}

/** An operator step starts: its operator's plan over the list, after the operator's own check of it. */
export function releaseOperator(spec: PipelineJobSpec, reader: PlanReader, unit: Unit, store: Record<string, unknown>): Advance {
  const items = operatorItems(unit, store);
  if (!items.ok) return fail(spec, reader, unit, unit.path, null, items.message, items.error);
  const { step, spec: sub } = subOperator(spec, operatorOf(unit));
  let inputs = items.items;
  try {
    if (step.itemsOf) inputs = step.itemsOf(sub, items.items as unknown[][]);
    else step.check?.(sub, items.items);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return fail(spec, reader, unit, unit.path, null, err instanceof Error ? err.message : String(err), typeof code === "string" ? { code } : {});
  }
  return operatorAdvance(spec, reader, unit, startSub(spec, operatorOf(unit), unit.path, reader, inputs), items.items);
}

/** What an operator step's operator said follows, in the pipeline: its end is the step's (its value, the operator's output). */
function operatorAdvance(spec: PipelineJobSpec, reader: PlanReader, unit: Unit, advance: Advance, items?: unknown[]): Advance {
  if (!advance.end) return advance;
  const { step, spec: sub } = subOperator(spec, operatorOf(unit));
  if (advance.end.status === "failed") return fail(spec, reader, unit, unit.path, null, advance.end.error?.message ?? "the step failed");
  const list =
    items ??
    (() => {
      const found = operatorItems(unit, storeBefore(spec, reader, spec.units.indexOf(unit)).store);
      return found.ok ? found.items : [];
    })();
  return finishStep(spec, reader, unit, step.value(sub, advance.end.output, list, subReader(spec, reader, unit)));
}

export const subReader = (spec: PipelineJobSpec, reader: PlanReader, unit: Unit): SubReader =>
  new SubReader(
    reader,
    unit.path,
    subStages(spec, operatorOf(unit)).map((s) => s.name),
  );

/** An operator step under way (or recovered): its operator asked what follows (`trigger` in its names; null: everything). */
export function progressOperator(spec: PipelineJobSpec, reader: PlanReader, unit: Unit, trigger: TaskView | null): Advance {
  const operator = operatorOf(unit);
  const started = subStages(spec, operator).some((s) => reader.extent(subStageName(unit.path, s.name)) > 0);
  if (!started && trigger === null) return releaseOperator(spec, reader, unit, storeBefore(spec, reader, spec.units.indexOf(unit)).store);
  const { step, spec: sub } = subOperator(spec, operator);
  const said = step.operator.advance(sub, subReader(spec, reader, unit), trigger);
  return operatorAdvance(spec, reader, unit, { ...inPipeline(unit.path, said), ...(said.end ? { end: said.end } : {}) });
}

/** A step's inputs from its lists for an estimate (none when they cannot run: the submission or the step's start says why). */
function madeOf(step: ReturnType<typeof subOperator>["step"], spec: JobSpecBase, lists: unknown[][]): unknown[] {
  try {
    return step.itemsOf?.(spec, lists) ?? [];
  } catch {
    return [];
  }
}

type Redo = ReturnType<NonNullable<Operator<PipelineJobSpec>["redoAfter"]>>;

/** What the operators of operator steps add to a recover of their tasks (those run again: not skipped, not dropped). */
export function withOperators(spec: PipelineJobSpec, reader: PlanReader, tasks: { stage: string; index: number }[], redo: Redo): Redo {
  const left = new Set([...(redo.skip ?? []).map((t) => `${t.stage}#${t.index}`)]);
  const dropped = new Set(redo.drop);
  const out = { rerun: [...redo.rerun], drop: [...redo.drop], skip: [...(redo.skip ?? [])] };
  for (const unit of spec.units) {
    if (!unit.operator) continue;
    const own = tasks.filter((t) => !dropped.has(t.stage) && !left.has(`${t.stage}#${t.index}`) && locate(spec, t.stage).unit === unit && t.stage !== STEPS);
    if (own.length === 0) continue;
    const op = subOperator(spec, unit.operator);
    const said = op.step.operator.redoAfter?.(
      op.spec,
      subReader(spec, reader, unit),
      own.map((t) => ({ stage: locate(spec, t.stage).sub as string, index: t.index })),
    );
    if (!said) continue;
    out.rerun.push(...named(unit.path, said.rerun));
    out.drop.push(...said.drop.map((stage) => subStageName(unit.path, stage)));
    out.skip.push(...named(unit.path, said.skip));
  }
  return out;
}

/**
 * An operator step's tasks for an estimate: its operator's, over the list when it is the
 * pipeline's inputs (exact for the first step, as the operator says), else over one item.
 */
export function operatorEstimate(spec: PipelineJobSpec, unit: Unit, ordinal: number): (TaskSeed & { exact?: boolean })[] {
  const op = subOperator(spec, operatorOf(unit));
  const lists = (operatorOf(unit).lists ?? [operatorOf(unit).from]).map((from) => {
    const resolved = Object.hasOwn(spec.inputs, from.name) ? resolveRef(spec.inputs, from) : null;
    return resolved?.found && Array.isArray(resolved.value) ? resolved.value : null;
  });
  const items = lists.every((list) => list !== null) ? lists : null;
  const inputs = op.step.itemsOf ? madeOf(op.step, op.spec, items ?? lists.map(() => [null])) : (items?.[0] ?? [null]);
  const plan = op.step.operator.plan(op.spec, inputs);
  const assumed = op.step.operator.estimateTasks?.(op.spec, plan).tasks ?? plan.tasks;
  const known = items !== null && ordinal === 0;
  return assumed.map((t) => ({
    stage: subStageName(unit.path, t.stage),
    index: t.index,
    input: { ordinal, sub: { input: t.input, known } },
    ...(known && "exact" in t && t.exact === true ? { exact: true } : {}),
  }));
}
