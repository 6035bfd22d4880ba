/**
 * An operator's plan run in memory, the way the coordinator applies it (job-run.ts `begin`,
 * `afterChange`; store.ts `makeReady`) without a Durable Object: the plan's stages and tasks,
 * `advance(null)` at the start, then each finished task's `advance` — its stage sizes, the tasks
 * it makes ready, the tasks the operator finishes itself (each advanced in turn), the end. Tests
 * answer each dispatched task themselves (`answer`), so an operator's `plan`/`advance` is
 * tested with no runtime, no model and no clock.
 */
import type { Advance, JobEnd, JobSpecBase, Operator, PlanReader, StageCounts, TaskSeed, TaskView } from "../../../src/engine/types";
import { NO_USAGE_SUMS } from "../../../src/engine/counters";

type Row = TaskView & { priority: number; blocked: boolean };

/** How a test answers a dispatched task: its output, or a failure. */
export type Answer = { output: unknown } | { error: string };

export class MemoryPlan<S extends JobSpecBase> {
  readonly tasks = new Map<string, Row>();
  readonly keys = new Map<string, number[]>(); // `stage\u001fkey` → indices filed under it (PlanReader `keyed`)
  readonly stages = new Map<string, StageCounts>();
  readonly dispatched: string[] = []; // `stage:index`, in dispatch order
  end: JobEnd | null = null;

  constructor(
    readonly op: Operator<S>,
    readonly spec: S,
  ) {}

  /** The job starts: its plan stored, then `advance(null)`. */
  start(inputs: unknown[]): this {
    const plan = this.op.plan(this.spec, inputs);
    for (const s of plan.stages) this.stages.set(s.name, { total: s.total, completed: 0, succeeded: 0, failed: 0, ...NO_USAGE_SUMS });
    for (const seed of plan.tasks) this.#insert(seed);
    this.apply(this.op.advance(this.spec, this.reader, null));
    return this;
  }

  readonly reader: PlanReader = {
    task: (stage, index) => this.tasks.get(`${stage}:${index}`),
    extent: (stage) => Math.max(0, ...[...this.tasks.values()].filter((t) => t.stage === stage).map((t) => t.index + 1)),
    open: () => [...this.tasks.values()].filter((t) => t.state !== "done").length,
    done: (stage) => [...this.tasks.values()].filter((t) => t.stage === stage && t.state === "done").sort((a, b) => a.index - b.index),
    stage: (name) => this.stages.get(name),
    keyed: (stage, keys, limit) => {
      const found = new Set(keys.flatMap((key) => [...(this.keys.get(`${stage}\u001f${key}`) ?? [])].sort((a, b) => a - b).slice(0, limit)));
      return [...found].sort((a, b) => a - b);
    },
    outputs: (stage, indices) => {
      const out = new Map<number, unknown>();
      for (const index of indices) {
        const task = this.tasks.get(`${stage}:${index}`);
        if (task?.state === "done") out.set(index, task.output);
      }
      return out;
    },
  };

  /** The tasks ready to run now, in the coordinator's dispatch order (priority, index, stage). */
  pending(): TaskView[] {
    return [...this.tasks.values()]
      .filter((t) => t.state === "pending")
      .sort((a, b) => a.priority - b.priority || a.index - b.index || a.stage.localeCompare(b.stage));
  }

  /** Runs every ready task, one at a time in dispatch order, until the job ends or nothing is ready. */
  run(answer: (task: TaskView, vars: Record<string, unknown>) => Answer, maxTasks = 10_000): this {
    for (let n = 0; this.end === null && n < maxTasks; n++) {
      const [next] = this.pending();
      if (!next) break;
      this.finish(next, answer(next, this.op.vars(this.spec, next, this.reader)));
    }
    return this;
  }

  /** One task ends as `answer` says; what the operator says follows is applied. */
  finish(task: TaskView, answer: Answer): void {
    this.dispatched.push(`${task.stage}:${task.index}`);
    this.#record(
      task.stage,
      task.index,
      "output" in answer ? { success: true, output: answer.output, error: null } : { success: false, output: null, error: answer.error },
    );
  }

  /**
   * As job-coordinator.ts `recover`: the failed and unfinished tasks run again (those the
   * operator skips excepted), the finished ones it asks for wait for their inputs anew, the stages
   * it drops are planned anew; then `advance(null)`. Returns how many tasks run again.
   */
  recover(): number {
    const candidates = [...this.tasks.values()].filter((t) => t.state !== "done" || t.success === false);
    const redo = this.op.redoAfter?.(
      this.spec,
      this.reader,
      candidates.map((t) => ({ stage: t.stage, index: t.index })),
    ) ?? { rerun: [], drop: [] };
    const skipped = new Set((redo.skip ?? []).map((t) => `${t.stage}:${t.index}`));
    const rows = candidates.filter((t) => !skipped.has(`${t.stage}:${t.index}`));
    const rerun = redo.rerun.map((t) => this.tasks.get(`${t.stage}:${t.index}`)).filter((t): t is Row => t !== undefined && !rows.includes(t));
    for (const row of [...rows, ...rerun]) {
      if (row.state === "done") {
        const counts = this.#stage(row.stage);
        counts.completed--;
        if (row.success) counts.succeeded--;
        else counts.failed--;
      }
      const blocked = rerun.includes(row) || row.state === "blocked";
      Object.assign(row, { state: blocked ? "blocked" : "pending", success: null, output: null, error: null });
    }
    for (const stage of redo.drop) {
      for (const [key, task] of this.tasks) if (task.stage === stage) this.tasks.delete(key);
      Object.assign(this.#stage(stage), { total: 0, completed: 0, succeeded: 0, failed: 0 });
    }
    this.end = null;
    this.apply(this.op.advance(this.spec, this.reader, null));
    return rows.length + rerun.length;
  }

  apply(first: Advance): void {
    const queue = [first];
    for (let advance = queue.shift(); advance; advance = queue.shift()) {
      for (const [stage, total] of Object.entries(advance.totals ?? {})) this.#stage(stage).total = total;
      for (const seed of [...advance.ready, ...(advance.local ?? [])]) this.#makeReady(seed);
      for (const local of advance.local ?? []) {
        for (const key of local.keys ?? []) {
          const filed = this.keys.get(`${local.stage}\u001f${key}`) ?? [];
          if (!filed.includes(local.index)) this.keys.set(`${local.stage}\u001f${key}`, [...filed, local.index]);
        }
        queue.push(this.#settle(local.stage, local.index, { success: true, output: local.output, error: null }));
      }
      if (advance.end) {
        this.end = advance.end;
        return;
      }
    }
  }

  #record(stage: string, index: number, end: { success: boolean; output: unknown; error: string | null }): void {
    this.apply(this.#settle(stage, index, end));
  }

  #settle(stage: string, index: number, end: { success: boolean; output: unknown; error: string | null }): Advance {
    const row = this.tasks.get(`${stage}:${index}`);
    if (!row) throw new Error(`no task ${stage}:${index}`);
    Object.assign(row, { state: "done", ...end });
    const counts = this.#stage(stage);
    counts.completed++;
    if (end.success) counts.succeeded++;
    else counts.failed++;
    return this.op.advance(this.spec, this.reader, row);
  }

  #stage(name: string): StageCounts {
    let counts = this.stages.get(name);
    if (!counts) this.stages.set(name, (counts = { total: 0, completed: 0, succeeded: 0, failed: 0, ...NO_USAGE_SUMS }));
    return counts;
  }

  #insert(seed: TaskSeed): boolean {
    const key = `${seed.stage}:${seed.index}`;
    if (this.tasks.has(key)) return false;
    const blocked = seed.blocked === true;
    this.tasks.set(key, {
      stage: seed.stage,
      index: seed.index,
      state: blocked ? "blocked" : "pending",
      success: null,
      output: null,
      input: seed.input ?? null,
      error: null,
      priority: seed.priority ?? 0,
      blocked,
    });
    return true;
  }

  /** As the store's makeReady: a new task is inserted (ready, or blocked); a blocked one becomes ready with the seed's input. */
  #makeReady(seed: TaskSeed): void {
    if (this.#insert(seed) || seed.blocked) return;
    const row = this.tasks.get(`${seed.stage}:${seed.index}`) as Row;
    if (row.state === "blocked") Object.assign(row, { state: "pending", input: seed.input ?? null });
  }
}
