/**
 * The retention sweep (the cron handler): ended jobs older than JOB_RETENTION_DAYS go with their
 * rows and their objects' storage; recent ones and jobs not ended stay.
 */
import { createExecutionContext, createScheduledController, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { sweepExpiredJobs } from "../../src/jobs/delete";
import { base, call, ok, report, startJob, tick } from "./coordinator/drive";
import type { MapJobSpec } from "../../src/operators/map/plan";
import { capturingLogs, insertFinishedJob, tenantWithKey } from "./helpers";

const DAY = 86_400_000;
const mapSpec = (jobId: string, tenantId: string): MapJobSpec => ({ ...base(jobId, tenantId), type: "map", call: call() });

async function age(jobId: string, days: number): Promise<void> {
  await env.DB.prepare("UPDATE jobs SET completed_at = ? WHERE id = ?")
    .bind(new Date(Date.now() - days * DAY).toISOString(), jobId)
    .run();
}

const exists = async (jobId: string) => (await env.DB.prepare("SELECT COUNT(*) AS n FROM jobs WHERE id = ?").bind(jobId).first<{ n: number }>())?.n === 1;

describe("retention", () => {
  it("deletes ended jobs past JOB_RETENTION_DAYS (default 30) with their results, sessions and stored state", async () => {
    const { stub, jobId } = await startJob(mapSpec, ["a"]);
    await tick(stub);
    await report(stub, "items", 0, ok("x"));
    await age(jobId, 31);
    const { tenantId } = await tenantWithKey();
    const recent = `job_recent_${crypto.randomUUID().slice(0, 8)}`;
    const running = `job_running_${crypto.randomUUID().slice(0, 8)}`;
    await insertFinishedJob(tenantId, recent);
    await age(recent, 29);
    await insertFinishedJob(tenantId, running, "running");
    await age(running, 40);
    await env.DB.prepare(
      "INSERT INTO sessions (id, job_id, tenant_id, idx, status, turns, created_at, updated_at) VALUES ('ses_old', ?, ?, 0, 'completed', 1, 'x', 'x')",
    )
      .bind(jobId, tenantId)
      .run();
    await env.DB.prepare("INSERT INTO session_messages (session_id, seq, message, created_at) VALUES ('ses_old', 1, '{}', 'x')").run();

    expect(await sweepExpiredJobs(env)).toBeGreaterThanOrEqual(1);
    expect(await exists(jobId)).toBe(false);
    expect(await exists(recent)).toBe(true);
    expect(await exists(running)).toBe(true);
    const left = await env.DB.prepare(
      "SELECT (SELECT COUNT(*) FROM results WHERE job_id = ?) + (SELECT COUNT(*) FROM sessions WHERE job_id = ?) + (SELECT COUNT(*) FROM session_messages WHERE session_id = 'ses_old') AS n",
    )
      .bind(jobId, jobId)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    // The coordinator's own storage is empty: no spec, no tasks, no events.
    const stored = await runInDurableObject(stub, (_i, state) => ({
      tasks: state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM tasks").one().n,
      events: state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM events").one().n,
      spec: state.storage.sql.exec("SELECT v FROM meta WHERE k = 'spec'").toArray().length,
    }));
    expect(stored).toEqual({ tasks: 0, events: 0, spec: 0 });
  });

  it("runs from the cron trigger, with JOB_RETENTION_DAYS", async () => {
    const { tenantId } = await tenantWithKey();
    const old = `job_cron_${crypto.randomUUID().slice(0, 8)}`;
    await insertFinishedJob(tenantId, old, "failed");
    await age(old, 3);
    const ctx = createExecutionContext();
    const { logged } = await capturingLogs(async () => {
      await worker.scheduled(createScheduledController({ cron: "17 * * * *", scheduledTime: Date.now() }), { ...env, JOB_RETENTION_DAYS: "2" } as Env, ctx);
      await waitOnExecutionContext(ctx);
    });
    expect(await exists(old)).toBe(false);
    expect(logged).toContainEqual(expect.stringMatching(/^retention: deleted \d+ ended jobs$/));
  });
});
