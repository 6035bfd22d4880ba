/**
 * The D1 migrations on a database that already holds data: 0005 rebuilds `results`,
 * `webhook_deliveries` and `webhook_attempts` (foreign keys between them), keeping every row.
 */
import { applyD1Migrations, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";

describe("D1 migrations", () => {
  it("bring a v1 database with jobs, results and webhook deliveries to the staged schema, losing nothing", async () => {
    const db = env.MIGRATION_DB;
    const v1 = env.TEST_MIGRATIONS.filter((m) => m.name < "0005");
    await applyD1Migrations(db, v1);
    await db.batch([
      db.prepare("INSERT INTO tenants (id, name, created_at) VALUES ('ten_1', 'a', 'x')"),
      db.prepare(
        "INSERT INTO jobs (id, tenant_id, type, status, model, total, request_hash, created_ms, created_at) VALUES ('job_1', 'ten_1', 'map', 'completed', 'm', 2, 'h', 1, 'x')",
      ),
      db.prepare(
        "INSERT INTO results (job_id, idx, completion_seq, success, data) VALUES ('job_1', 0, 1, 1, '{\"index\":0}'), ('job_1', 1, 2, 0, '{\"index\":1}')",
      ),
      db.prepare(
        "INSERT INTO webhook_deliveries (id, job_id, tenant_id, event_type, url, payload, status, created_at) VALUES ('whd_1', 'job_1', 'ten_1', 'MAP_COMPLETED', 'u', 'p', 'delivered', 'x')",
      ),
      db.prepare("INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms) VALUES ('whd_1', 1, 'x', 5)"),
    ]);
    await applyD1Migrations(db, env.TEST_MIGRATIONS);
    const results = await db.prepare("SELECT stage, idx, success FROM results ORDER BY idx").all();
    expect(results.results).toEqual([
      { stage: "items", idx: 0, success: 1 },
      { stage: "items", idx: 1, success: 0 },
    ]);
    expect(await db.prepare("SELECT id, round FROM webhook_deliveries").first()).toEqual({ id: "whd_1", round: 1 });
    expect(await db.prepare("SELECT delivery_id, attempt FROM webhook_attempts").first()).toEqual({ delivery_id: "whd_1", attempt: 1 });
    expect(await db.prepare("SELECT main_stage, stages FROM jobs").first()).toEqual({ main_stage: "items", stages: "[]" });
    expect((await db.prepare("PRAGMA foreign_key_check").all()).results).toEqual([]);
    const attempts = await db.prepare("SELECT sql FROM sqlite_master WHERE name = 'webhook_attempts'").first<{ sql: string }>();
    expect(attempts?.sql).toContain('REFERENCES "webhook_deliveries"(id)');
    // A second round of the same event now fits, and a delivery's attempts still need their delivery.
    await db
      .prepare(
        "INSERT INTO webhook_deliveries (id, job_id, tenant_id, event_type, round, url, payload, status, created_at) VALUES ('whd_2', 'job_1', 'ten_1', 'MAP_COMPLETED', 2, 'u', 'p', 'pending', 'x')",
      )
      .run();
    await expect(
      db.prepare("INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms) VALUES ('whd_none', 1, 'x', 5)").run(),
    ).rejects.toThrow(/FOREIGN KEY/);
  });
});
