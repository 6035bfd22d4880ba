/**
 * The coordinator's versioned SQLite schema: an object written by the v1 deploy (table `items`,
 * a flat spec, no schema version) is brought to the staged schema once, keeping its tasks.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JobCoordinator } from "../../../durable-objects/job-coordinator";
import { migrate, SCHEMA_VERSION } from "../../../durable-objects/coordinator/schema";

describe("coordinator schema migrations", () => {
  it("upgrades a v1 object: items become the stage `items`, the spec gains its call, outbox rows keep their place", async () => {
    const stub = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_schema_${Date.now()}`)) as DurableObjectStub<JobCoordinator>;
    const out = await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      for (const t of ["tasks", "stages", "outbox", "events", "meta", "batches"]) sql.exec(`DROP TABLE IF EXISTS ${t}`);
      sql.exec(`CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
        CREATE TABLE items (idx INTEGER PRIMARY KEY, input TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
          ready_at INTEGER NOT NULL DEFAULT 0, slot INTEGER, token TEXT, dispatched_at INTEGER, problems TEXT,
          input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0, session_id TEXT);
        CREATE TABLE events (id INTEGER PRIMARY KEY, name TEXT NOT NULL, data TEXT NOT NULL);
        CREATE TABLE outbox (idx INTEGER PRIMARY KEY, seq INTEGER NOT NULL, success INTEGER NOT NULL, data TEXT NOT NULL);`);
      const v1Spec = {
        jobId: "job_x",
        tenantId: "ten_x",
        type: "map",
        model: "openai/m",
        promptTemplate: "{{ item }}",
        outputSchema: null,
        systemPrompt: null,
        temperature: null,
        maxTokens: null,
        timeoutMs: 1000,
        maxRetries: 2,
        concurrency: 3,
        retryGuidance: "g",
        maxOutputBytes: 10,
        webhook: null,
      };
      sql.exec("INSERT INTO meta (k, v) VALUES ('spec', ?)", JSON.stringify(v1Spec));
      sql.exec("INSERT INTO items (idx, input, state, attempts) VALUES (0, '\"a\"', 'done', 1), (1, '\"b\"', 'pending', 0)");
      sql.exec("INSERT INTO outbox (idx, seq, success, data) VALUES (0, 1, 1, '{}')");
      migrate(state.storage);
      migrate(state.storage); // a second run changes nothing
      return {
        version: JSON.parse(sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'schema_version'").one().v),
        tasks: sql.exec("SELECT stage, idx, state, attempts FROM tasks ORDER BY idx").toArray(),
        outbox: sql.exec("SELECT stage, idx, seq FROM outbox").toArray(),
        stages: sql.exec("SELECT name, total, completed FROM stages").toArray(),
        spec: JSON.parse(sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'spec'").one().v),
        items: sql.exec("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'items'").one().n,
      };
    });
    expect(out.version).toBe(SCHEMA_VERSION);
    expect(out.tasks).toEqual([
      { stage: "items", idx: 0, state: "done", attempts: 1 },
      { stage: "items", idx: 1, state: "pending", attempts: 0 },
    ]);
    expect(out.outbox).toEqual([{ stage: "items", idx: 0, seq: 1 }]);
    expect(out.stages).toEqual([{ name: "items", total: 2, completed: 1 }]);
    expect(out.spec).toMatchObject({
      type: "map",
      maxRetries: 2,
      budget: null,
      call: { promptTemplate: "{{ item }}", templateField: "prompt_template", retryGuidance: "g" },
    });
    expect(out.items).toBe(0);
  });

  it("step 5: stages get their kind in a column; an agent's children stage becomes `children` under its parent, a step named like one stays work", async () => {
    const stub = env.JOB_COORDINATOR.get(env.JOB_COORDINATOR.idFromName(`job_schema5_${Date.now()}`)) as DurableObjectStub<JobCoordinator>;
    const stages = await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      migrate(state.storage);
      // As step 4 left it: no kind, no parent (nor step 6's usage columns).
      for (const table of ["tasks", "stages"]) {
        for (const column of ["cache_read_tokens", "cache_write_tokens", "cost_usd", "unpriced_calls"]) sql.exec(`ALTER TABLE ${table} DROP COLUMN ${column}`);
      }
      sql.exec("ALTER TABLE tasks DROP COLUMN reserved_usd");
      sql.exec("DROP INDEX tasks_batch; ALTER TABLE tasks DROP COLUMN batch_id; DROP TABLE batches"); // step 7's
      sql.exec("ALTER TABLE stages DROP COLUMN step"); // step 8's
      sql.exec("ALTER TABLE tasks DROP COLUMN handed"); // step 10's
      sql.exec("ALTER TABLE tasks DROP COLUMN route"); // step 11's
      sql.exec("ALTER TABLE outbox DROP COLUMN event_id"); // step 12's
      sql.exec("ALTER TABLE stages DROP COLUMN kind; ALTER TABLE stages DROP COLUMN parent; UPDATE meta SET v = '4' WHERE k = 'schema_version'");
      sql.exec(`INSERT INTO stages (name, ord, status, total) VALUES ('items', 0, 'running', 2), ('items.subtasks', 1, 'running', 1),
        ('outer.subtasks', 2, 'pending', 1)`);
      migrate(state.storage);
      return sql.exec("SELECT name, kind, parent FROM stages ORDER BY ord").toArray();
    });
    expect(stages).toEqual([
      { name: "items", kind: "work", parent: null },
      { name: "items.subtasks", kind: "children", parent: "items" },
      { name: "outer.subtasks", kind: "work", parent: null }, // a pipeline's step `subtasks` inside `outer`
    ]);
  });
});
