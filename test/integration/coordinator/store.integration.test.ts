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
