/**
 * An operator's plan run inside another's (a pipeline's operator step, ./pipeline/sub-plan.ts; a
 * join over its embedding blocking's pairs, ./join/embedded.ts): its stages named under a path
 * (./pipeline/stage-names.ts; "" keeps their own names), its reader seeing only them under its
 * own names, and what it says follows said back in the outer plan's names.
 *
 * The operator starts the way the coordinator starts a job: its plan's tasks are added, then it is
 * asked what follows with nothing finished (`advance(null)`). Both happen in one answer here, so
 * the operator reads its planned tasks through an overlay until they are stored.
 */
import type { Advance, JobSpecBase, Operator, PlanReader, StageCounts, TaskSeed, TaskView } from "../engine/types";
import { NO_USAGE_SUMS } from "../engine/counters";
import { subStageName } from "./pipeline/stage-names";

/** The pipeline's reader as the operator sees it: only its stages, by its own names (plus planned tasks not stored yet). */
export class SubReader implements PlanReader {
  constructor(
    private readonly reader: PlanReader,
    private readonly path: string,
    private readonly stages: string[],
    private readonly planned: { seeds: Map<string, TaskView>; totals: Record<string, number> } | null = null,
  ) {}

  task(stage: string, index: number): TaskView | undefined {
    const stored = this.reader.task(subStageName(this.path, stage), index);
    return stored ? { ...stored, stage } : this.planned?.seeds.get(`${stage}#${index}`);
  }

  extent(stage: string): number {
    let planned = 0;
    for (const seed of this.planned?.seeds.values() ?? []) if (seed.stage === stage) planned = Math.max(planned, seed.index + 1);
    return Math.max(this.reader.extent(subStageName(this.path, stage)), planned);
  }

  open(): number {
    let open = 0;
    for (const name of this.stages) {
      const counts = this.stage(name);
      if (counts) open += Math.max(0, counts.total - counts.completed);
    }
    return open;
  }

  done(stage: string): TaskView[] {
    return this.reader.done(subStageName(this.path, stage)).map((t) => ({ ...t, stage }));
  }

  keyed(stage: string, keys: readonly string[], limit: number): number[] {
    return this.reader.keyed(subStageName(this.path, stage), keys, limit);
  }

  outputs(stage: string, indices: readonly number[]): Map<number, unknown> {
    return this.reader.outputs(subStageName(this.path, stage), indices);
  }

  stage(name: string): StageCounts | undefined {
    const stored = this.reader.stage(subStageName(this.path, name));
    const total = this.planned?.totals[name];
    if (total === undefined) return stored;
    return { ...(stored ?? { total: 0, completed: 0, succeeded: 0, failed: 0, ...NO_USAGE_SUMS }), total };
  }
}

/** Tasks or seeds of the operator's, in the pipeline's names. */
export const named = <T extends { stage: string }>(path: string, seeds: T[] | undefined): T[] =>
  (seeds ?? []).map((s) => ({ ...s, stage: subStageName(path, s.stage) }));

/** What the operator said follows, in the pipeline's names (its end is the caller's). */
export function inPipeline(path: string, advance: Advance): Advance {
  const totals = advance.totals ? Object.fromEntries(Object.entries(advance.totals).map(([stage, n]) => [subStageName(path, stage), n])) : undefined;
  return { ready: named(path, advance.ready), ...(advance.local ? { local: named(path, advance.local) } : {}), ...(totals ? { totals } : {}) };
}

/** An operator's start over items known only now, its stages under `path` ("": their own names). */
export function startPlan<S extends JobSpecBase>(operator: Operator<S>, spec: S, path: string, reader: PlanReader, items: unknown[]): Advance {
  const plan = operator.plan(spec, items);
  const totals = Object.fromEntries(plan.stages.map((s) => [s.name, s.total]));
  const seeds = new Map<string, TaskView>(
    plan.tasks.map((t: TaskSeed) => [
      `${t.stage}#${t.index}`,
      { stage: t.stage, index: t.index, state: t.blocked ? "blocked" : "pending", success: null, output: null, input: t.input, error: null },
    ]),
  );
  const first = operator.advance(
    spec,
    new SubReader(
      reader,
      path,
      plan.stages.map((s) => s.name),
      { seeds, totals },
    ),
    null,
  );
  const both: Advance = { ready: [...plan.tasks, ...first.ready], totals: { ...totals, ...first.totals }, ...(first.local ? { local: first.local } : {}) };
  return { ...inPipeline(path, both), ...(first.end ? { end: first.end } : {}) };
}
