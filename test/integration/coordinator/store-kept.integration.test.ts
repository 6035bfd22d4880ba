/**
 * What the coordinator's store keeps in memory instead of reading it again (./store.ts): meta and
 * the open-task count, the slots' running tasks as written, the next pending tasks read ahead, the
 * stages' counts added once a turn. Each is checked against what SQL says (a store of its own
 * reads it fresh) through the writes that must change or drop it, rollbacks included.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JobCoordinator } from "../../../durable-objects/job-coordinator";
import { CoordinatorStore, stateOf, type TaskRow } from "../../../durable-objects/coordinator/store";
import { taskTransition, type TaskEvent } from "../../../src/engine/task-machine";

const freshObject = () => env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_kept_${crypto.randomUUID()}`)) as DurableObjectStub<JobCoordinator>;

describe("coordinator store: what it keeps", () => {
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
});
