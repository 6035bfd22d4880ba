/**
 * The coordinator's store, on a coordinator object's own SQLite storage: a plan's tasks inserted,
 * making tasks ready, a stage's extent; the task state machine's transitions as the store writes
 * them, one task's (saveTask) and set-wise (every due task, every running task at the end).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JobCoordinator } from "../../../durable-objects/job-coordinator";
import { CoordinatorStore, stateOf, type TaskRow } from "../../../durable-objects/coordinator/store";
import { freshTask, taskTransition, type TaskEvent, type TaskState } from "../../../src/engine/task-machine";

const freshObject = () => env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_store_${crypto.randomUUID()}`)) as DurableObjectStub<JobCoordinator>;

describe("coordinator store", () => {
  it("makes a task ready once: inserted ready or blocked, a blocked one released with its input, never twice", async () => {
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      const steps = [
        store.makeReady({ stage: "s", index: 0, input: "a" }), // new: ready
        store.makeReady({ stage: "s", index: 0, input: "changed" }), // ready already: nothing changes
        store.makeReady({ stage: "s", index: 1, input: null, blocked: true }), // new: blocked
        store.makeReady({ stage: "s", index: 1, input: "late", blocked: true }), // blocked again: nothing changes
        store.makeReady({ stage: "s", index: 1, input: "b" }), // released with its input
        store.makeReady({ stage: "s", index: 1, input: "again" }), // left blocked already
      ];
      const rows = [0, 1].map((i) => store.task("s", i)).map((t) => [t?.state, t?.input]);
      store.makeReady({ stage: "s", index: 7, input: "far" });
      return { steps, rows, extent: store.extent("s"), none: store.extent("other") };
    });
    expect(out.steps).toEqual([true, false, false, false, true, false]);
    expect(out.rows).toEqual([
      ["pending", '"a"'],
      ["pending", '"b"'],
    ]);
    expect(out.extent).toBe(8); // one past the highest index
    expect(out.none).toBe(0);
  });

  it("files tasks under keys of their stage and reads them back by keys: the first `limit` of each, together, once, stages apart", async () => {
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      store.index.file("neighbours", 9, ["0:5", "1:3"]);
      store.index.file("neighbours", 2, ["0:5"]);
      store.index.file("neighbours", 2, ["0:5"]); // again: still once
      store.index.file("neighbours", 4, ["0:5"]);
      store.index.file("neighbours", 7, ["1:3"]);
      store.index.file("other", 1, ["0:5"]);
      // 200 keys of one task each: more than one statement binds (100 values at most).
      for (let i = 0; i < 200; i++) store.index.file("many", 1000 + i, [`k${i}`]);
      store.index.file(
        "wide",
        5,
        Array.from({ length: 70 }, (_, i) => `w${i}`),
      ); // one task under 70 keys: filed in three statements
      const wide = Array.from({ length: 70 }, (_, i) => store.index.keyed("wide", [`w${i}`], 1)[0]);
      return {
        all: store.index.keyed("neighbours", ["0:5"], 10),
        two: store.index.keyed("neighbours", ["0:5"], 2),
        bands: store.index.keyed("neighbours", ["0:5", "1:3"], 1), // each key's first: 2 and 7
        none: store.index.keyed("neighbours", ["7:7"], 10),
        many: store.index.keyed(
          "many",
          Array.from({ length: 200 }, (_, i) => `k${i}`),
          1,
        ).length,
        wide: [...new Set(wide)],
      };
    });
    expect(out).toEqual({ all: [2, 4, 9], two: [2, 4], bands: [2, 7], none: [], many: 200, wide: [5] });
  });

  it("reads the outputs of a stage's finished tasks together, in chunks of bound values; unfinished ones absent", async () => {
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      for (let i = 0; i < 150; i++) store.makeReady({ stage: "vectors", index: i, input: null });
      state.storage.sql.exec("UPDATE tasks SET state = 'done', output = json_quote('v' || idx) WHERE stage = 'vectors' AND idx % 2 = 0");
      const read = store.index.outputs(
        "vectors",
        Array.from({ length: 150 }, (_, i) => i),
      );
      return { size: read.size, first: read.get(0), odd: read.has(1), last: read.get(148) };
    });
    expect(out).toEqual({ size: 75, first: "v0", odd: false, last: "v148" });
  });

  it("stores a plan's tasks as a task made ready one by one would be, inputs byte for byte, in chunks of rows and a huge row alone", async () => {
    const tricky: unknown[] = [
      'quote " backslash \\ slash / tab \t newline \n nul \u0000',
      "lone \ud800 surrogate, pair 😀, é, \u2028",
      1.2345678901234567,
      -0,
      1e21,
      2 ** 70,
      null,
      { nested: [1, "two", { three: true }], empty: {} },
      [],
      "x".repeat(300_000), // past one chunk's size with its neighbours
      "y".repeat(300_000),
      '"'.repeat(300_000), // escaped twice inside the array: a row too large for any chunk, inserted alone
      "z",
    ];
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      store.insertTasks(
        tricky.map((input, index) => ({ stage: "plan", index, input, priority: index % 3, blocked: index === 4, sessionId: index === 5 ? "ses_1" : null })),
      );
      for (const [index, input] of tricky.entries())
        store.makeReady({ stage: "one", index, input, priority: index % 3, blocked: index === 4, sessionId: index === 5 ? "ses_1" : null });
      const pick = (stage: string) => tricky.map((_, i) => store.task(stage, i)).map((t) => t && [t.idx, t.input, t.state, t.priority, t.session_id]);
      return { plan: pick("plan"), one: pick("one"), extent: store.extent("plan") };
    });
    expect(out.plan).toEqual(out.one);
    expect(out.extent).toBe(tricky.length);
    expect(out.plan.map((row) => JSON.parse((row as [number, string])[1]))).toEqual(tricky.map((v) => JSON.parse(JSON.stringify(v))));
    expect(out.plan[4]?.[2]).toBe("blocked");
    expect(out.plan[5]?.[4]).toBe("ses_1");
  });

  it("writes the machine's transitions as they are, refuses a stale one, and its set-wise SQL agrees with the machine", async () => {
    const policy = { maxRetries: 2, maxWaitMs: 60_000 };
    const usage = { input_tokens: 1, output_tokens: 1 };
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      const move = (idx: number, event: TaskEvent): TaskState | null => {
        const row = store.task("s", idx) as TaskRow;
        const t = taskTransition(stateOf(row), event, policy);
        return t && store.saveTask(row, t.task, { reserved: { tokens: 10, usd: 0.1 } }) ? t.task : null;
      };
      for (let idx = 0; idx < 8; idx++) store.makeReady({ stage: "s", index: idx, input: idx, blocked: idx === 7 });
      const dispatch = (idx: number, slot: number) => move(idx, { type: "dispatch", slot, token: `t${idx}`, now: 1_000 });
      const report = (idx: number, outcome: Extract<TaskEvent, { type: "report" }>["outcome"]) =>
        move(idx, { type: "report", outcome, now: 2_000, random: () => 0 });
      // 0 running; 1 waiting, due at 2,500; 2 waiting, due at 9,000 (a throttle's Retry-After); 3 pending after invalid output; 4 a child; 5 running with no slot (a batch line); 6 pending; 7 blocked.
      const written = [dispatch(0, 0), dispatch(1, 1), report(1, { kind: "transient", error: "500", retryAfterMs: null, usage }), dispatch(2, 2)];
      written.push(report(2, { kind: "transient", error: "429", retryAfterMs: 7_000, throttled: true, usage }), dispatch(3, 3));
      written.push(report(3, { kind: "invalid", error: "bad", problems: ["not JSON"], usage }), dispatch(4, 4));
      written.push(report(4, { kind: "spawn", spawn: { sessionId: "c" } as never, usage }));
      written.push(move(5, { type: "dispatch", slot: null, token: "batch:b", now: 1_000 }));
      const rowOf = (idx: number) => store.task("s", idx) as TaskRow;
      const before = Array.from({ length: 8 }, (_, idx) => stateOf(rowOf(idx)));
      const stale = rowOf(0);
      const staleWrite = store.saveTask({ ...stale, token: "old" }, { ...stateOf(stale), state: "pending" });
      const machine = (event: TaskEvent) => before.map((t) => taskTransition(t, event, policy)?.task ?? t);
      store.releaseDue(3_000);
      const due = { sql: Array.from({ length: 8 }, (_, idx) => stateOf(rowOf(idx))), machine: machine({ type: "due", now: 3_000 }) };
      store.resumeParent("s", 4);
      const afterDue = Array.from({ length: 8 }, (_, idx) => stateOf(rowOf(idx)));
      const childEnded = { sql: afterDue[4], machine: taskTransition(due.sql[4] as TaskState, { type: "child-ended" }, policy)?.task };
      store.releaseRunning();
      const release = {
        sql: Array.from({ length: 8 }, (_, idx) => stateOf(rowOf(idx))),
        machine: afterDue.map((t) => taskTransition(t, { type: "release" }, policy)?.task ?? t),
        reserved: Array.from({ length: 8 }, (_, idx) => rowOf(idx).reserved),
      };
      store.saveTask(rowOf(2), { ...stateOf(rowOf(2)), losses: 1 }); // a loss behind it: kept by a reset
      const resetting = [stateOf(rowOf(1)), stateOf(rowOf(2)), stateOf(rowOf(7))];
      store.reopen([rowOf(1), rowOf(2), rowOf(7)], [], () => "ses_new");
      const reset = {
        sql: [stateOf(rowOf(1)), stateOf(rowOf(2)), stateOf(rowOf(7))],
        machine: resetting.map((t) => taskTransition(t, { type: "reset", blocked: false }, policy)?.task),
      };
      return { written: written.map((t) => t?.state ?? null), before, staleWrite, due, childEnded, release, reset };
    });
    expect(out.written).toEqual(["running", "running", "waiting", "running", "waiting", "running", "pending", "running", "child", "running"]);
    expect(out.before.map((t) => t.state)).toEqual(["running", "waiting", "waiting", "pending", "child", "running", "pending", "blocked"]);
    expect(out.before[2]).toMatchObject({ throttles: 1, throttledSince: 2_000, readyAt: 9_000 });
    expect(out.before[3]?.problems).toEqual(["not JSON"]);
    expect(out.before[4]?.attempts).toBe(0); // a child's parent: its attempt goes on when dispatched again
    expect(out.staleWrite).toBe(false);
    expect(out.due.sql).toEqual(out.due.machine);
    expect(out.due.sql.map((t) => t.state)).toEqual(["running", "pending", "waiting", "pending", "child", "running", "pending", "blocked"]);
    expect(out.childEnded.sql).toEqual(out.childEnded.machine);
    expect(out.release.sql).toEqual(out.release.machine);
    expect(out.release.sql.filter((t) => t.state === "running")).toEqual([]);
    expect(out.release.reserved).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(out.reset.sql).toEqual(out.reset.machine);
    expect(out.reset.sql).toEqual([freshTask(), { ...freshTask(), losses: 1 }, freshTask(true)]);
  });

  it("keeps the slots' running tasks as it wrote them for their dispatch's reports: every read the row SQL has, a stale row's write and a rolled-back one dropped", async () => {
    const policy = { maxRetries: 2, maxWaitMs: 60_000 };
    const usage = { input_tokens: 3, output_tokens: 4, cache_read_tokens: 1, cache_write_tokens: 0, cost_usd: 0.1 + 0.2, unpriced_calls: 0 };
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      const fromSql = (idx: number) => new CoordinatorStore(state.storage).task("s", idx); // a store of its own keeps nothing yet
      const checks: { step: string; same: boolean }[] = [];
      const check = (step: string) => {
        for (let idx = 0; idx < 4; idx++) {
          const sql = fromSql(idx) as TaskRow;
          const read = sql.state === "running" ? store.runningTask("s", idx, sql.token as string) : store.task("s", idx);
          checks.push({ step: `${step} #${idx}`, same: JSON.stringify(read) === JSON.stringify(sql) });
        }
      };
      const move = (idx: number, event: TaskEvent, write: Parameters<CoordinatorStore["saveTask"]>[2] = {}) => {
        const read = store.task("s", idx) as TaskRow;
        const row = read.state === "running" ? (store.runningTask("s", idx, read.token as string) as TaskRow) : read; // as a report reads it
        const t = taskTransition(stateOf(row), event, policy);
        return t !== null && store.saveTask(row, t.task, write);
      };
      for (let idx = 0; idx < 4; idx++) store.makeReady({ stage: "s", index: idx, input: { n: idx }, blocked: false });
      check("ready");
      move(0, { type: "dispatch", slot: 0, token: "t0", now: 1_000 }, { reserved: { tokens: 120, usd: 0.25 } });
      move(1, { type: "dispatch", slot: 1, token: "t1", now: 1_000 }, { reserved: { tokens: 7, usd: 0.5 } });
      move(2, { type: "dispatch", slot: null, token: "batch:b", now: 1_000 }, { batchId: "b" });
      check("dispatched");
      const kept = store.runningTask("s", 0, "t0") === store.runningTask("s", 0, "t0") && store.runningTask("s", 1, "t1") === store.runningTask("s", 1, "t1");
      const notKept = store.runningTask("s", 2, "batch:b") !== store.runningTask("s", 2, "batch:b"); // a batch line
      const otherToken = store.runningTask("s", 0, "t1") === undefined && store.runningTask("s", 3, "t0") === undefined; // a stale report's; a pending task's
      const stale = store.task("s", 0) as TaskRow;
      move(0, { type: "hand", why: "claimed", now: 1_500 }); // handed again, same token
      check("handed");
      // A write from the row as read before the hand: SQL keeps its `handed`, so the store keeps nothing of it.
      store.saveTask(stale, { ...stateOf(stale), dispatchedAt: 1_700 }, { usage });
      check("stale write");
      move(1, { type: "report", outcome: { kind: "transient", error: "500", retryAfterMs: null, usage }, now: 2_000, random: () => 0 }, { usage });
      check("reported");
      move(1, { type: "due", now: 9_000 });
      move(1, { type: "dispatch", slot: 1, token: "t1b", now: 9_000 }, { reserved: { tokens: 9, usd: 0.75 }, usage });
      check("dispatched again");
      let inner: TaskRow | undefined;
      try {
        store.transaction(() => {
          move(1, { type: "hand", why: "claimed", now: 9_500 });
          inner = store.runningTask("s", 1, "t1b");
          throw new Error("rolled back");
        });
      } catch {
        // the hand is gone, and so is what the store kept of it
      }
      check("rolled back");
      // A row read inside the rolled-back transaction (handed once, which SQL no longer says) is not the task as it is.
      store.saveTask(inner as TaskRow, { ...stateOf(inner as TaskRow), dispatchedAt: 9_700 });
      check("written from a rolled-back read");
      const row1 = store.task("s", 1) as TaskRow;
      store.markDone(row1, { ...stateOf(row1), state: "done", slot: null, token: null }, usage, {
        success: true,
        output: { ok: 1 },
        error: null,
        errorKind: null,
      });
      check("done");
      store.releaseRunning();
      check("released");
      return { checks, kept, notKept, otherToken };
    });
    expect(out.checks.filter((c) => !c.same)).toEqual([]);
    expect(out.checks).toHaveLength(40);
    expect(out.kept).toBe(true);
    expect(out.notKept).toBe(true);
    expect(out.otherToken).toBe(true);
  });

  it("reads the next pending tasks ahead and keeps them in order through dispatches, retries, releases and rollbacks: every answer the one SQL gives", async () => {
    const policy = { maxRetries: 5, maxWaitMs: 60_000 };
    const usage = { input_tokens: 1, output_tokens: 1 };
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      const keys = (rows: TaskRow[]) => rows.map((r) => `${r.stage}#${r.idx}`).join(" ");
      const fromSql = (limit: number) => new CoordinatorStore(state.storage).nextPending(limit); // a store of its own reads
      const checks: { step: string; kept: string; sql: string }[] = [];
      const check = (step: string) => {
        for (const limit of [1, 3, 16, 40]) checks.push({ step: `${step} (${limit})`, kept: keys(store.nextPending(limit)), sql: keys(fromSql(limit)) });
      };
      const move = (row: TaskRow, event: TaskEvent) => {
        const t = taskTransition(stateOf(row), event, policy);
        return t !== null && store.saveTask(row, t.task);
      };
      store.insertTasks(Array.from({ length: 30 }, (_, i) => ({ stage: i % 2 ? "b" : "a", index: i, input: i, priority: i % 3 })));
      check("planned");
      const servedFromMemory = store.nextPending(1)[0] === store.nextPending(1)[0];
      let slot = 0;
      const dispatchNext = () => move(store.nextPending(1)[0] as TaskRow, { type: "dispatch", slot: slot++, token: `t${slot}`, now: 1_000 });
      for (let i = 0; i < 5; i++) dispatchNext();
      check("five dispatched");
      const running = () => store.running().sort((x, y) => x.idx - y.idx);
      move(running()[0] as TaskRow, { type: "withdraw" }); // back to pending, ahead of those read
      check("withdrawn");
      move(running()[0] as TaskRow, { type: "report", outcome: { kind: "transient", error: "500", retryAfterMs: null, usage }, now: 2_000, random: () => 0 });
      check("waiting");
      store.releaseDue(1_000_000);
      check("due");
      const pending = store.nextPending(2)[1] as TaskRow;
      // Ended where it waited (the operator's own output, `local`), as the runner ends a task: markDone.
      store.markDone(
        pending,
        { ...stateOf(pending), state: "done" },
        { ...usage, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced_calls: 0 },
        {
          success: true,
          output: 1,
          error: null,
          errorKind: null,
        },
      );
      check("ended while pending");
      store.makeReady({ stage: "a", index: 100, input: 100, priority: -1 });
      check("made ready");
      try {
        store.transaction(() => {
          dispatchNext();
          dispatchNext();
          throw new Error("rolled back");
        });
      } catch {
        // both dispatches are gone
      }
      check("rolled back");
      for (let i = 0; i < 20; i++) dispatchNext();
      check("past the read");
      store.releaseRunning();
      check("released");
      return { checks, servedFromMemory };
    });
    expect(out.checks.filter((c) => c.kept !== c.sql)).toEqual([]);
    expect(out.checks).toHaveLength(40);
    expect(out.checks.at(-1)?.sql.split(" ").length).toBeGreaterThan(20); // the release made every running task pending again
    expect(out.servedFromMemory).toBe(true);
  });

  it("reads the next pending tasks in dispatch order, exactly as many as asked for, however many (the LIMIT written into the statement)", async () => {
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      store.insertStages([{ name: "s", total: 40 }]);
      store.insertTasks(Array.from({ length: 40 }, (_, i) => ({ stage: "s", index: 39 - i, input: i, priority: i < 5 ? 0 : 1 })));
      const idx = (limit: number, skip?: string[]) => store.nextPending(limit, skip).map((t) => t.idx);
      // A task as the store reads it (an array made an object) is the table's row, every column of it.
      const asRead = store.task("s", 3);
      const asStored = state.storage.sql.exec("SELECT * FROM tasks WHERE stage = 's' AND idx = 3").one();
      return {
        asRead,
        asStored,
        none: idx(0),
        one: idx(1),
        three: idx(3),
        sixteen: idx(16).length,
        seventeen: idx(17),
        all: idx(100).length,
        skipped: idx(5, ["s"]),
        fraction: idx(2.7),
      };
    });
    expect(out.asRead).toEqual(out.asStored);
    expect(Object.keys(out.asRead ?? {}).length).toBe(30);
    expect(out.none).toEqual([]);
    expect(out.one).toEqual([35]); // priority 0 first: indices 35–39
    expect(out.three).toEqual([35, 36, 37]);
    expect(out.sixteen).toBe(16);
    expect(out.seventeen).toEqual([35, 36, 37, 38, 39, ...Array.from({ length: 12 }, (_, i) => i)]); // 32 read, 17 kept
    expect(out.all).toBe(40);
    expect(out.skipped).toEqual([]);
    expect(out.fraction).toEqual([35, 36]);
  });

  it("keeps meta it read or wrote, forgets it when a transaction rolls back, and keeps the open count through each task's end only", async () => {
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      const sql = state.storage.sql;
      store.setMeta("round", 2);
      const kept = store.getMeta("round");
      // A caller that changes what it read does not change what the next read gets.
      store.setMeta("answered", { a: 1 });
      (store.getMeta("answered") as Record<string, number>).a = 99;
      const unchanged = store.getMeta("answered");
      try {
        store.transaction(() => {
          store.setMeta("round", 3);
          throw new Error("rolled back");
        });
      } catch {
        // the write is gone: the next read is the stored value
      }
      const afterRollback = store.getMeta("round");
      const stored = JSON.parse(sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'round'").one().v) as number;
      store.insertStages([
        { name: "a", total: 2 },
        { name: "b", total: 3 },
      ]);
      const open = [store.open()];
      store.countStageDone("a", true, { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced_calls: 0 });
      open.push(store.open());
      store.setStageTotal("b", 10);
      open.push(store.open());
      const counts = store.countStageDone("b", false, {
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: 0,
        unpriced_calls: 0,
      });
      open.push(store.open());
      try {
        store.transaction(() => {
          store.countStageDone("a", true, { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced_calls: 0 });
          throw new Error("rolled back");
        });
      } catch {
        // the stage's count is as before
      }
      open.push(store.open());
      const fresh = new CoordinatorStore(state.storage).open(); // what a restart reads
      return { kept, unchanged, afterRollback, stored, open, counts, fresh };
    });
    expect(out.kept).toBe(2);
    expect(out.unchanged).toEqual({ a: 1 });
    expect(out.afterRollback).toBe(2);
    expect(out.stored).toBe(2);
    expect(out.open).toEqual([5, 4, 11, 10, 10]);
    expect(out.counts).toEqual({ completed: 1, total: 10 });
    expect(out.fresh).toBe(10);
  });

  it("adds a turn's ends to their stages' counts in one write at the turn's end, before any read of them, and not at all when rolled back", async () => {
    const out = await runInDurableObject(freshObject(), async (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      type Counts = { completed: number; succeeded: number; failed: number; input_tokens: number };
      const inSql = (name: string) =>
        state.storage.sql.exec<Counts>("SELECT completed, succeeded, failed, input_tokens FROM stages WHERE name = ?", name).one();
      const u = (n: number) => ({ input_tokens: n, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: n / 10, unpriced_calls: 0 });
      store.insertStages([
        { name: "a", total: 3 },
        { name: "b", total: 2 },
      ]);
      const answers = [store.countStageDone("a", true, u(1)), store.countStageDone("a", false, u(2))];
      const unwritten = inSql("a").completed; // the turn has not ended
      const read = store.stage("a"); // a read writes them first
      const afterRead = inSql("a").completed;
      answers.push(store.countStageDone("b", true, u(3)));
      answers.push(store.countStageDone("a", true, u(4))); // the last of a
      await Promise.resolve(); // the turn's end
      const turnEnd = [inSql("a"), inSql("b")];
      try {
        store.transaction(() => {
          store.countStageDone("b", true, u(5));
          store.stages(); // written inside the transaction, and rolled back with it
          throw new Error("rolled back");
        });
      } catch {
        // b's count is as before
      }
      answers.push(store.countStageDone("b", false, u(6)));
      await Promise.resolve();
      const b = inSql("b");
      store.countStageDone("a", true, u(7)); // added, not written…
      store.dropStage("a"); // …when the stage is planned anew: it must not land on the new counts
      await Promise.resolve();
      const dropped = inSql("a");
      const restarted = new CoordinatorStore(state.storage).stage("b"); // what a restart reads
      return { answers, unwritten, read: read?.completed, afterRead, turnEnd, b, dropped, restarted: restarted?.completed, open: store.open() };
    });
    expect(out.answers).toEqual([
      { completed: 1, total: 3 },
      { completed: 2, total: 3 },
      { completed: 1, total: 2 },
      { completed: 3, total: 3 },
      { completed: 2, total: 2 },
    ]);
    expect([out.unwritten, out.read, out.afterRead]).toEqual([0, 2, 2]);
    expect(out.turnEnd).toEqual([
      { completed: 3, succeeded: 2, failed: 1, input_tokens: 7 },
      { completed: 1, succeeded: 1, failed: 0, input_tokens: 3 },
    ]);
    expect(out.b).toEqual({ completed: 2, succeeded: 1, failed: 1, input_tokens: 9 });
    expect(out.dropped).toEqual({ completed: 0, succeeded: 0, failed: 0, input_tokens: 0 });
    expect(out.restarted).toBe(2);
    expect(out.open).toBe(0); // a: dropped (total 0); b: 2 of 2
  });

  it("reads and moves tasks by state through the state's own index, never a scan of every task", async () => {
    const out = await runInDurableObject(freshObject(), (_i, state) => {
      const store = new CoordinatorStore(state.storage);
      store.insertStages([{ name: "s", total: 3 }]);
      store.insertTasks([0, 1, 2].map((i) => ({ stage: "s", index: i, input: i })));
      // The statements the store runs, captured as it runs them, then explained with the same values.
      const sql = state.storage.sql;
      const ran: [string, unknown[]][] = [];
      const exec = sql.exec.bind(sql);
      (sql as { exec: unknown }).exec = (query: string, ...args: unknown[]) => {
        ran.push([query, args]);
        return exec(query, ...(args as SqlStorageValue[]));
      };
      store.nextPending(1);
      store.nextPending(40, ["other"]);
      store.running();
      store.runningOn(0);
      store.reserved();
      store.reserved("s");
      store.releaseDue(Date.now());
      store.nextWaitingAt();
      store.releaseRunning();
      (sql as { exec: unknown }).exec = exec;
      return ran.map(([query, args]) => ({
        query: query.slice(0, 60),
        plan: exec(`EXPLAIN QUERY PLAN ${query}`, ...(args as SqlStorageValue[]))
          .toArray()
          .map((r) => String(r.detail))
          .join(" | "),
      }));
    });
    expect(out.length).toBe(9);
    for (const { query, plan } of out) {
      expect(plan, query).toMatch(/USING (COVERING )?INDEX tasks_(ready|waiting|running)/);
      expect(plan, query).not.toMatch(/SCAN tasks(?! USING)/);
    }
  });
});
