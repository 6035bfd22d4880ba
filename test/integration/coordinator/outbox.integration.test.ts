/**
 * A result's JSON is stored once (the coordinator's schema step 12): its outbox row points at its
 * event, whose data ends with the result, and the D1 mirror reads it back from there — the same
 * text, to the character, whatever the result holds; a row written before keeps its own data.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JobCoordinator } from "../../../durable-objects/job-coordinator";
import { CoordinatorStore } from "../../../durable-objects/coordinator/store";
import { EventHub } from "../../../durable-objects/coordinator/event-hub";
import { JobLog } from "../../../durable-objects/coordinator/job-log";
import { eventShape } from "../../../durable-objects/coordinator/event-shapes";
import { resultStatements, type OutboxRow } from "../../../src/db/jobs";
import { insertFinishedJob, tenantWithKey } from "../helpers";

describe("the outbox reads a result from its event", () => {
  it("gives back each result's JSON exactly as it was written, for v1 and staged events and a child's, and an older row's own data", async () => {
    const stub = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_outbox_${crypto.randomUUID()}`)) as DurableObjectStub<JobCoordinator>;
    const results = [
      { index: 0, success: true, output: { text: 'a ,"result": inside a string, and a quote " and a brace }' }, usage: { input_tokens: 1 } },
      { index: 1, success: false, output: null, error: "ünïcödé \u2028 and \\ backslashes", nested: [{ result: { result: 1 } }] },
      { index: 2, success: true, output: 1.5e-7 },
    ];
    const out = await runInDurableObject(stub, (_instance, state) => {
      const store = new CoordinatorStore(state.storage);
      const v1 = new JobLog(store, new EventHub(60_000), eventShape({ v1: true }));
      const staged = new JobLog(store, new EventHub(60_000), eventShape({ v1: false }));
      const [first, second, third] = results;
      store.outbox.add("items", first, 1, v1.taskCompleted({ jobId: "job_x", stage: "items", index: 0, success: true }, JSON.stringify(first)));
      store.outbox.add('a "stage"', second, 2, staged.taskCompleted({ jobId: "job_x", stage: 'a "stage"', index: 1, success: false }, JSON.stringify(second)));
      const fields = { job_id: "job_x", stage: "items.subtasks", index: 2, success: true };
      store.outbox.add("items.subtasks", third, 3, staged.emitWithResult("SUBTASK_COMPLETED", fields, JSON.stringify(third)));
      // Rows from before step 12: their data, no event.
      state.storage.sql.exec("INSERT INTO outbox (stage, idx, seq, success, data) VALUES ('items', 3, 4, 1, '{\"index\":3,\"success\":true}')");
      state.storage.sql.exec("INSERT INTO outbox (stage, idx, seq, success, data) VALUES ('old', 0, 5, 1, '{\"index\":0,\"kept\":true}')");
      return {
        rows: store.outbox.next(10),
        stored: state.storage.sql.exec<{ n: number }>("SELECT SUM(length(data)) AS n FROM outbox WHERE event_id IS NOT NULL").one().n,
      };
    });
    expect(out.rows.map((r) => r.data)).toEqual([...results.map((r) => JSON.stringify(r)), '{"index":3,"success":true}', '{"index":0,"kept":true}']);
    expect(out.rows.map((r) => [r.stage, r.idx, r.seq, r.success])).toEqual([
      ["items", 0, 1, 1],
      ['a "stage"', 1, 2, 0],
      ["items.subtasks", 2, 3, 1],
      ["items", 3, 4, 1],
      ["old", 0, 5, 1],
    ]);
    expect(out.stored).toBe(0); // the rows that point at an event hold no copy of the result
  });
});

describe("the mirror copies results to D1", () => {
  it("writes many results in one statement and a huge one alone, exactly as given; an older copy of a result never replaces a newer one", async () => {
    const jobId = `job_copy_${crypto.randomUUID()}`;
    const { tenantId } = await tenantWithKey();
    await insertFinishedJob(tenantId, jobId);
    const huge = JSON.stringify({ index: 7, text: "x".repeat(600 * 1024) });
    const rows: OutboxRow[] = [
      ...Array.from({ length: 60 }, (_, i) => ({
        stage: "items",
        idx: i,
        seq: 10 + i,
        success: i % 2,
        data: JSON.stringify({ index: i, quote: 'a "b" \\ ü' }),
      })),
      { stage: "items", idx: 7, seq: 100, success: 1, data: huge }, // a newer copy of 7, too big for a chunk
      { stage: "s2", idx: 0, seq: 101, success: 1, data: '{"index":0}' },
    ];
    const statements = resultStatements(env.DB, jobId, rows);
    expect(statements.length).toBe(3); // the 60 together, the huge row alone, the last row
    await env.DB.batch(statements);
    // An older copy (a late flush of a result recovered since): left as it is.
    await env.DB.batch(resultStatements(env.DB, jobId, [{ stage: "items", idx: 7, seq: 3, success: 0, data: "{}" }]));
    const stored = await env.DB.prepare("SELECT stage, idx, completion_seq AS seq, success, data FROM results WHERE job_id = ? ORDER BY stage, idx")
      .bind(jobId)
      .all<OutboxRow>();
    const byKey = new Map(stored.results.map((r) => [`${r.stage}:${r.idx}`, r]));
    expect(stored.results.length).toBe(61); // the helper's result 0 of stage "items" replaced by the copy's
    for (const row of rows.filter((r) => r.idx !== 7 || r.seq === 100)) expect(byKey.get(`${row.stage}:${row.idx}`)).toEqual(row);
  });
});
