/**
 * A poison item whose worker dies (or never reports) on every attempt: each loss counts as an
 * attempt, and after 1 + max_retries of them the item fails with error_kind `internal` and the
 * job ends — it is never dispatched forever. Driven at the Durable Object level: the sweep
 * (the coordinator's alarm) finds dispatches with no report past their deadline.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JobCoordinator } from "../../durable-objects/job-coordinator";
import type { MapJobSpec } from "../../src/operators/map/plan";
import { base, call, startJob } from "../integration/coordinator/drive";

function spec(jobId: string, tenantId: string, maxRetries: number): MapJobSpec {
  return { ...base(jobId, tenantId), type: "map", maxRetries, concurrency: 2, call: call({ maxTokens: null, timeoutMs: 1_000, maxOutputBytes: 1_000 }) };
}

type Row = { idx: number; state: string; attempts: number };

/** Makes every running dispatch look lost: its token no longer matches and its deadline is long past. */
async function loseRunningDispatches(stub: DurableObjectStub<JobCoordinator>): Promise<Row[]> {
  return runInDurableObject(stub, (_instance, state) => {
    state.storage.sql.exec("UPDATE tasks SET dispatched_at = 0, token = 'gone' WHERE state = 'running'");
    return state.storage.sql.exec<Row>("SELECT idx, state, attempts FROM tasks ORDER BY idx").toArray();
  });
}

describe("lost attempts", () => {
  it("count as attempts and end the item with internal after max_retries", async () => {
    const { stub, jobId } = await startJob((id, tenantId) => spec(id, tenantId, 1), ["poison"]);
    expect(await runDurableObjectAlarm(stub)).toBe(true); // begins the job and dispatches attempt 1
    expect((await loseRunningDispatches(stub))[0]).toMatchObject({ state: "running", attempts: 1 });
    expect(await runDurableObjectAlarm(stub)).toBe(true); // the sweep: attempt 1 lost, attempt 2 dispatched
    expect((await loseRunningDispatches(stub))[0]).toMatchObject({ state: "running", attempts: 2 });
    expect(await runDurableObjectAlarm(stub)).toBe(true); // attempt 2 lost: 1 + max_retries reached
    const result = await runInDurableObject(stub, (_instance, state) => {
      const item = state.storage.sql.exec<Row>("SELECT idx, state, attempts FROM tasks").one();
      const events = state.storage.sql.exec<{ name: string; data: string }>("SELECT name, data FROM events ORDER BY id").toArray();
      return { item, events };
    });
    expect(result.item).toMatchObject({ state: "done", attempts: 2 });
    const completed = result.events.find((e) => e.name === "MAP_ITEM_COMPLETED");
    expect(JSON.parse(completed?.data ?? "{}").result).toMatchObject({ success: false, error_kind: "internal", attempts: 2 });
    const end = result.events.find((e) => e.name === "MAP_COMPLETED");
    expect(JSON.parse(end?.data ?? "{}")).toMatchObject({ status: "completed", failed: 1, total_attempts: 2 });
    const row = await env.DB.prepare("SELECT status, failed, total_attempts FROM jobs WHERE id = ?").bind(jobId).first();
    expect(row).toMatchObject({ status: "completed", failed: 1, total_attempts: 2 });
  });

  it("quarantine an item after two losses whatever its max_retries: a poison item restarts the runtime at most twice", async () => {
    const { stub } = await startJob((id, tenantId) => spec(id, tenantId, 5), ["poison"]);
    expect(await runDurableObjectAlarm(stub)).toBe(true); // attempt 1 dispatched
    await loseRunningDispatches(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true); // attempt 1 lost, attempt 2 dispatched
    expect((await loseRunningDispatches(stub))[0]).toMatchObject({ state: "running", attempts: 2 });
    expect(await runDurableObjectAlarm(stub)).toBe(true); // attempt 2 lost: quarantined, though 4 retries are left
    const task = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql
        .exec<{ state: string; attempts: number; losses: number; error_kind: string; error: string }>(
          "SELECT state, attempts, losses, error_kind, error FROM tasks",
        )
        .one(),
    );
    expect(task).toMatchObject({ state: "done", attempts: 2, error_kind: "internal" });
    expect(task.error).toMatch(/lost 2 times/);
  });
});
