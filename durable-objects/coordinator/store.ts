/**
 * The coordinator's own SQLite storage: the truth about a job while it runs (schema: ./schema.ts).
 *
 *   meta(k, v)            spec, status, counters, budget, output, error (JSON values: ./meta-table.ts)
 *   tasks(stage, idx, …)  one row per task; its state as ../../src/engine/task-machine.ts moves it
 *   stages(name, …)       each stage's status and counters, in plan order
 *   events, outbox        the event log and the results not yet in D1 (./event-store.ts)
 *   batches               the provider batches of the job's batch stages (./batch-table.ts)
 */
import { TaskIndex } from "./task-index";
import { MetaTable } from "./meta-table";
import type { JobMeta, MetaKey } from "./job-meta";
import { SUBTASKS_SUFFIX, type StageKind, type StagePlan, type StageStatus, type TaskSeed } from "../../src/engine/types";
import { EventLogTable, Outbox } from "./event-store";
import { migrate } from "./schema";
import { BatchTable } from "./batch-table";
import { addSums, type UsageSums } from "../../src/engine/counters";
import { resetTask, type TaskEnd, type TaskState } from "../../src/engine/task-machine";
import { stateOf, TASK_COLUMNS, taskRows, taskSums, type StageRow, type TaskRow, type TaskWrite } from "./store-rows";
import { ADD_USAGE, CHILD_ENDED, CLEAR_USAGE, DUE, insertChunked, READY, RELEASE, stateChanges, taskColumns, usageArgs } from "./store-sql";
import { limitClause } from "./sql-limit";
import { RunningRows } from "./running-rows";
import { PendingRows, READ_AHEAD } from "./pending-rows";
import { StageCounts, type StageProgress } from "./stage-counts";

export { itemStages, stateOf, taskSums, taskView, type StageRow, type TaskRow, type TaskWrite } from "./store-rows";

export class CoordinatorStore {
  readonly #sql: SqlStorage;
  readonly #storage: DurableObjectStorage;
  readonly events: EventLogTable;
  readonly outbox: Outbox;
  readonly batches: BatchTable<TaskRow>;
  /** An operator's own index over its tasks (./task-index.ts). */
  readonly index: TaskIndex;
  readonly #meta: MetaTable;
  #sizes = 0; // bumped whenever a stage is added or its total changes
  #kinds: Map<string, { kind: StageKind; parent: string | null }> | null = null; // each stage's facts, read once (stages are added, never renamed)
  readonly #running = new RunningRows(); // the slots' running tasks as last written (./running-rows.ts)
  readonly #pending = new PendingRows(); // the next pending tasks, read ahead (./pending-rows.ts)
  readonly #counts: StageCounts; // the stages' counts as tasks end, written once a turn (./stage-counts.ts)

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.#sql = storage.sql;
    migrate(storage);
    this.#meta = new MetaTable(this.#sql);
    this.events = new EventLogTable(this.#sql);
    this.outbox = new Outbox(this.#sql);
    this.batches = new BatchTable<TaskRow>(this.#sql);
    this.index = new TaskIndex(this.#sql);
    this.#counts = new StageCounts(this.#sql);
  }

  transaction<T>(fn: () => T): T {
    const restoreCounts = this.#counts.mark();
    try {
      return this.#storage.transactionSync(fn);
    } catch (err) {
      restoreCounts(); // the stages' counts as they were
      this.#kinds = null; // a stage added in the rolled-back transaction is gone
      this.#meta.forget(); // and so is what it wrote to meta
      this.#running.clear(); // and to the tasks
      this.#pending.clear();
      throw err;
    }
  }

  getMeta<K extends MetaKey>(key: K): JobMeta[K] | undefined {
    return this.#meta.get(key);
  }

  setMeta<K extends MetaKey>(key: K, value: JobMeta[K]): void {
    this.#meta.set(key, value);
  }

  /** Written once at the end of this turn (./meta-table.ts). */
  setMetaSoon<K extends MetaKey>(key: K, value: JobMeta[K]): void {
    this.#meta.soon(key, value);
  }

  /** Writes what waits for the turn's end now (meta written soon, the stages' counts). */
  flushSoon(): void {
    this.#meta.flush();
    this.#counts.flush();
  }

  // ── stages ──────────────────────────────────────────────────────────────────────────────────

  /** Changes whenever a stage is added, dropped or resized: what was derived from the stages' totals is stale. */
  get sizesVersion(): number {
    return this.#sizes;
  }

  insertStages(stages: StagePlan[]): void {
    this.#sizes++;
    this.#counts.forget();
    this.#kinds = null;
    stages.forEach((s, ord) =>
      this.#sql.exec(
        "INSERT INTO stages (name, ord, status, total, step) VALUES (?, ?, ?, ?, ?)",
        s.name,
        ord,
        s.skipped ? "skipped" : "pending",
        s.total,
        s.step ?? null,
      ),
    );
  }

  /**
   * The stage where the children of a task of `stage` run, made on first use after the planned
   * ones: a stage of the plan has one (`<stage>.subtasks`: no stage of the plan has that name, as
   * a stage of the plan named `x.y` is a step `y` inside the sequential step `x`, which spawns
   * nothing); grandchildren run in their parent's.
   */
  childStage(stage: string): string {
    const parent = this.#facts(stage);
    if (parent?.kind === "children") return stage;
    const name = `${stage}${SUBTASKS_SUFFIX}`;
    if (!this.#facts(name)) {
      this.#sizes++;
      this.#counts.forget();
      this.#kinds = null;
      this.#sql.exec(
        "INSERT INTO stages (name, kind, parent, ord, status, total, step) VALUES (?, 'children', ?, (SELECT COALESCE(MAX(ord), 0) + 1 FROM stages), 'pending', 0, (SELECT step FROM stages WHERE name = ?))",
        name,
        stage,
        stage,
      );
    }
    return name;
  }

  /** Whether `stage` holds an agent's children (its tasks are sub-sessions, not items). */
  isChildren(stage: string): boolean {
    return this.#facts(stage)?.kind === "children";
  }

  /** The stage of the plan whose work a task of `stage` does: its own, or for children their parents'. */
  workStage(stage: string): string {
    const facts = this.#facts(stage);
    return facts?.kind === "children" && facts.parent !== null ? facts.parent : stage;
  }

  #facts(stage: string): { kind: StageKind; parent: string | null } | undefined {
    this.#kinds ??= new Map(
      this.#sql
        .exec<{ name: string; kind: StageKind; parent: string | null }>("SELECT name, kind, parent FROM stages")
        .toArray()
        .map((r) => [r.name, { kind: r.kind, parent: r.parent }]),
    );
    return this.#kinds.get(stage);
  }

  stages(): StageRow[] {
    this.#counts.flush();
    return this.#sql.exec<StageRow>("SELECT * FROM stages ORDER BY ord").toArray();
  }

  stage(name: string): StageRow | undefined {
    this.#counts.flush();
    return this.#sql.exec<StageRow>("SELECT * FROM stages WHERE name = ?", name).toArray()[0];
  }

  setStageTotal(name: string, total: number): void {
    this.#sizes++;
    this.#counts.forget();
    this.#sql.exec("UPDATE stages SET total = ? WHERE name = ?", total, name);
  }

  /** The finished tasks of a stage, in index order. */
  doneTasks(stage: string): TaskRow[] {
    return taskRows(this.#sql.exec(`SELECT ${TASK_COLUMNS} FROM tasks WHERE stage = ? AND state = 'done' ORDER BY idx`, stage));
  }

  setStageStatus(name: string, status: StageStatus): void {
    this.#sql.exec("UPDATE stages SET status = ? WHERE name = ?", status, name);
  }

  /** A task of the stage ended: counted (written at the turn's end: ./stage-counts.ts). Answers the stage's counts now (its whole row: `stage(name)`). */
  countStageDone(name: string, success: boolean, usage: UsageSums): StageProgress {
    return this.#counts.ended(name, success, usage);
  }

  // ── tasks ───────────────────────────────────────────────────────────────────────────────────

  /** A plan's tasks, a chunk of rows per statement (./store-sql.ts); a row too large for a chunk on its own. */
  insertTasks(seeds: TaskSeed[]): void {
    this.#pending.clear(); // new tasks may go before the ones read ahead
    insertChunked(this.#sql, seeds, (seed, input) => this.#insert(seed, input, false));
  }

  /** Inserts a seed's task (ready, or blocked when the seed says so); with `keepExisting` a task already there stays as it is. Returns whether it was inserted. */
  #insert(seed: TaskSeed, input: string, keepExisting: boolean): boolean {
    this.#pending.clear();
    return (
      this.#sql.exec(
        `INSERT INTO tasks (stage, idx, input, state, priority, session_id) VALUES (?, ?, ?, ?, ?, ?)${keepExisting ? " ON CONFLICT (stage, idx) DO NOTHING" : ""}`,
        ...taskColumns(seed, input),
      ).rowsWritten > 0
    );
  }

  /** Makes a task ready with its (now known) input; inserts it if the plan had not. Returns whether it became ready now (false: blocked, or it had left `blocked` already). */
  makeReady(seed: TaskSeed): boolean {
    const input = JSON.stringify(seed.input ?? null);
    if (this.#insert(seed, input, true)) return !seed.blocked; // a new task: ready, or blocked when the plan says so
    if (seed.blocked) return false;
    return (
      this.#sql.exec(
        `UPDATE tasks SET ${READY.sets}, input = ? WHERE stage = ? AND idx = ? AND state = ?`,
        ...READY.args,
        input,
        seed.stage,
        seed.index,
        READY.from,
      ).rowsWritten > 0
    );
  }

  /** The task running under dispatch `token` (of a report, a claim), kept since the store wrote it (./running-rows.ts), else read. */
  runningTask(stage: string, idx: number, token: string): TaskRow | undefined {
    const kept = this.#running.get(stage, idx);
    const row = kept?.token === token ? kept : this.task(stage, idx);
    return row?.state === "running" && row.token === token ? row : undefined;
  }

  task(stage: string, idx: number): TaskRow | undefined {
    return taskRows(this.#sql.exec(`SELECT ${TASK_COLUMNS} FROM tasks WHERE stage = ? AND idx = ?`, stage, idx))[0];
  }

  /** One past a stage's highest task index (0 for none): one seek on the primary key, however many tasks the stage has. */
  extent(stage: string): number {
    return this.#sql.exec<{ n: number | null }>("SELECT MAX(idx) + 1 AS n FROM tasks WHERE stage = ?", stage).one().n ?? 0;
  }

  /** The next pending tasks in dispatch order, but those of `skip` (stages whose tasks go out in provider batches). */
  nextPending(limit: number, skip: readonly string[] = []): TaskRow[] {
    if (skip.length === 0) {
      const known = this.#pending.first(limit);
      if (known) return known;
      const asked = Math.max(limit, READ_AHEAD);
      const ahead = limitClause(asked);
      const rows = ahead.keep(
        taskRows(this.#sql.exec(`SELECT ${TASK_COLUMNS} FROM tasks WHERE state = 'pending' ORDER BY priority, idx, stage ${ahead.clause}`)),
      );
      this.#pending.read(rows, asked);
      return rows.slice(0, limit);
    }
    const { clause, keep } = limitClause(limit);
    const sql = `SELECT ${TASK_COLUMNS} FROM tasks WHERE state = 'pending' AND stage NOT IN (SELECT value FROM json_each(?)) ORDER BY priority, idx, stage ${clause}`;
    return keep(taskRows(this.#sql.exec(sql, JSON.stringify(skip))));
  }

  running(): TaskRow[] {
    return taskRows(this.#sql.exec(`SELECT ${TASK_COLUMNS} FROM tasks WHERE state = 'running'`));
  }

  /** The call task running on `slot`, if any (a sub-session's task has no slot). */
  runningOn(slot: number): TaskRow | null {
    return taskRows(this.#sql.exec(`SELECT ${TASK_COLUMNS} FROM tasks WHERE state = 'running' AND slot = ? AND session_id IS NULL`, slot))[0] ?? null;
  }

  /** Whether a stage has a task that is not blocked (ready, under way or done). */
  stageHasWork(stage: string): boolean {
    return this.#sql.exec("SELECT 1 FROM tasks WHERE stage = ? AND state != 'blocked' LIMIT 1", stage).toArray().length > 0;
  }

  /** Tasks not done, over every stage (./stage-counts.ts). */
  open(): number {
    return this.#counts.open();
  }

  /** Set-wise `due` (../../src/engine/task-machine.ts): waiting tasks whose time has come become pending. */
  releaseDue(now: number): number {
    const due = this.#sql.exec(`UPDATE tasks SET ${DUE.sets} WHERE state = '${DUE.from}' AND ready_at <= ?`, ...DUE.args, now).rowsWritten;
    if (due > 0) this.#pending.clear();
    return due;
  }

  nextWaitingAt(): number | null {
    return this.#sql.exec<{ t: number | null }>("SELECT MIN(ready_at) AS t FROM tasks WHERE state = 'waiting'").one().t;
  }

  /**
   * Stores one transition of a task (../../src/engine/task-machine.ts): `next`'s facts, the tokens it reserves while it runs, the usage its
   * attempt adds, its batch (undefined: unchanged) — only if the task is as it was read (state, token); returns whether it was written.
   */
  saveTask(row: TaskRow, next: TaskState, extra: TaskWrite = {}): boolean {
    const reserved = next.state === "running" ? (extra.reserved ?? { tokens: row.reserved, usd: row.reserved_usd }) : { tokens: 0, usd: 0 };
    // The hot path (a dispatch, a retry) writes only what changes: no usage to add, the batch unchanged.
    const usage = extra.usage && usageArgs(extra.usage).some((n) => n !== 0) ? extra.usage : null;
    const batch = extra.batchId !== undefined;
    const changes = stateChanges(row, next);
    const sql = `UPDATE tasks SET ${changes.sets ? `${changes.sets}, ` : ""}reserved = ?, reserved_usd = ?${batch ? ", batch_id = ?" : ""}${usage ? `, ${ADD_USAGE}` : ""} WHERE stage = ? AND idx = ? AND state = ? AND token IS ?`;
    const args = [
      ...changes.args,
      reserved.tokens,
      reserved.usd,
      ...(batch ? [extra.batchId ?? null] : []),
      ...(usage ? usageArgs(usage) : []),
      row.stage,
      row.idx,
      row.state,
      row.token,
    ];
    if (this.#sql.exec(sql, ...args).rowsWritten === 0) return false;
    this.#pending.wrote(row, next.state);
    const written = { ...changes.row, reserved: reserved.tokens, reserved_usd: reserved.usd, ...(usage ? addSums(taskSums(row), usage) : {}) };
    this.#running.wrote(row, batch ? { ...written, batch_id: extra.batchId ?? null } : written);
    return true;
  }

  /** Set-wise `child-ended` (../../src/engine/task-machine.ts): the child ended, its parent can be dispatched again. */
  resumeParent(stage: string, idx: number): void {
    this.#pending.clear();
    this.#sql.exec(`UPDATE tasks SET ${CHILD_ENDED.sets} WHERE stage = ? AND idx = ? AND state = ?`, ...CHILD_ENDED.args, stage, idx, CHILD_ENDED.from);
  }

  /** Attempts of the finished tasks: what their results add up to. */
  doneAttempts(): number {
    return this.#sql.exec<{ n: number | null }>("SELECT SUM(attempts) AS n FROM tasks WHERE state = 'done'").one().n ?? 0;
  }

  /** Tokens and dollars reserved by the dispatches under way (of one stage, if given). */
  reserved(stage?: string): { tokens: number; usd: number } {
    // The running tasks' index, also for a stage's (the planner would take the stage's key and read every task of the stage).
    const sum = "SELECT SUM(reserved) AS tokens, SUM(reserved_usd) AS usd FROM tasks INDEXED BY tasks_running WHERE state = 'running'";
    type Sums = { tokens: number | null; usd: number | null };
    const row = (stage === undefined ? this.#sql.exec<Sums>(sum) : this.#sql.exec<Sums>(`${sum} AND stage = ?`, stage)).one();
    return { tokens: row.tokens ?? 0, usd: row.usd ?? 0 };
  }

  /** A task's transition to `done` (`next`), with its end: `row` is the task as read in this turn, and the row it becomes is built from it, not read back. */
  markDone(row: TaskRow, next: TaskState, usage: UsageSums, end: TaskEnd): TaskRow {
    const changes = stateChanges(row, next);
    const done: TaskRow = {
      ...changes.row,
      ...addSums(taskSums(row), usage),
      reserved: 0,
      reserved_usd: 0,
      success: end.success ? 1 : 0,
      output: JSON.stringify(end.output ?? null),
      error: end.error,
      error_kind: end.errorKind,
    };
    this.#sql.exec(
      `UPDATE tasks SET ${changes.sets}, reserved = 0, reserved_usd = 0, success = ?, output = ?, error = ?, error_kind = ?, ${ADD_USAGE}
       WHERE stage = ? AND idx = ?`,
      ...changes.args,
      done.success,
      done.output,
      done.error,
      done.error_kind,
      ...usageArgs(usage),
      row.stage,
      row.idx,
    );
    this.#running.drop(row.stage, row.idx);
    this.#pending.left(row.stage, row.idx);
    return done;
  }

  /** Tasks a recover runs again: failed ones (optionally only of some error kinds) and every one not finished. */
  recoverable(errorKinds: string[] | null): TaskRow[] {
    // Children are their parent's: a parent run again (in a fresh session) spawns what it needs.
    return taskRows(
      this.#sql.exec(
        `SELECT ${TASK_COLUMNS} FROM tasks WHERE (state != 'done' OR success = 0) AND stage NOT IN (SELECT name FROM stages WHERE kind = 'children') ORDER BY stage, idx`,
      ),
    ).filter((t) => t.state !== "done" || errorKinds === null || (t.error_kind !== null && errorKinds.includes(t.error_kind)));
  }

  /**
   * Recover: `rows` run again from scratch, `rerun` (finished tasks the operator wants again) wait for their inputs anew (blocked); their
   * stages are pending again, no longer counting them. Agent tasks get a new session id. Returns how many finished tasks were reopened.
   */
  reopen(rows: TaskRow[], rerun: TaskRow[], newSessionId: () => string): { succeeded: number; failed: number } {
    const done = { succeeded: 0, failed: 0 };
    const blocked = new Set(rerun);
    this.#counts.flushAndForget();
    for (const row of [...rows, ...rerun]) {
      if (row.state === "done") {
        const ok = row.success === 1;
        done[ok ? "succeeded" : "failed"]++;
        this.#sql.exec(
          "UPDATE stages SET completed = completed - 1, succeeded = succeeded - ?, failed = failed - ? WHERE name = ?",
          ok ? 1 : 0,
          ok ? 0 : 1,
          row.stage,
        );
      }
      this.#resetTask(row, row.session_id ? newSessionId() : null, blocked.has(row));
    }
    for (const stage of new Set([...rows, ...rerun].map((r) => r.stage))) this.setStageStatus(stage, "pending");
    return done;
  }

  /** Drops every task of a stage, to be planned anew; returns how many of them had finished, by outcome. */
  dropStage(stage: string): { succeeded: number; failed: number } {
    this.#sizes++;
    this.#counts.flushAndForget(); // its counts are set to zero below: nothing added may land after
    const counts = this.#sql
      .exec<{ ok: number | null; bad: number | null }>(
        "SELECT SUM(CASE WHEN success = 1 THEN 1 ELSE 0 END) AS ok, SUM(CASE WHEN success = 0 THEN 1 ELSE 0 END) AS bad FROM tasks WHERE stage = ? AND state = 'done'",
        stage,
      )
      .one();
    this.#sql.exec("DELETE FROM tasks WHERE stage = ?", stage);
    this.#running.clear();
    this.#pending.clear();
    this.outbox.dropStage(stage);
    this.#sql.exec(`UPDATE stages SET status = 'pending', total = 0, completed = 0, succeeded = 0, failed = 0, ${CLEAR_USAGE} WHERE name = ?`, stage);
    return { succeeded: counts.ok ?? 0, failed: counts.bad ?? 0 };
  }

  /** The machine's `reset` (../../src/engine/task-machine.ts), clearing the task's usage, result, batch, reservation; an agent task: a new sub-session. */
  #resetTask(row: TaskRow, sessionId: string | null, blocked: boolean): void {
    this.#running.drop(row.stage, row.idx);
    this.#pending.clear();
    const changes = stateChanges(row, resetTask(stateOf(row), blocked));
    this.#sql.exec(
      `UPDATE tasks SET ${changes.sets ? `${changes.sets}, ` : ""}batch_id = NULL, ${CLEAR_USAGE}, reserved = 0, reserved_usd = 0,
         success = NULL, output = NULL, error = NULL, error_kind = NULL, session_id = ? WHERE stage = ? AND idx = ?`,
      ...changes.args,
      sessionId,
      row.stage,
      row.idx,
    );
  }

  /** Set-wise `release` (../../src/engine/task-machine.ts): running tasks give their slots back (the job's end), their reports stale from now on; a batch line forgets its batch. */
  releaseRunning(): void {
    this.#running.clear();
    this.#pending.clear();
    this.#sql.exec(`UPDATE tasks SET ${RELEASE.sets}, batch_id = NULL, reserved = 0, reserved_usd = 0 WHERE state = '${RELEASE.from}'`, ...RELEASE.args);
  }
}
