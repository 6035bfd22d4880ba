/**
 * DELETE /v1/jobs/{id}: an ended job goes with everything it left — results, its agents'
 * sessions and their messages, webhook deliveries, its stored events — and its idempotency key
 * is free again; a job not ended is 409; another tenant's or an unknown job is 404.
 */
import { describe, expect, it } from "vitest";
import { call, fake, newTenant, waitForJob, waitForStatus } from "./harness/api.ts";
import { base, scriptedMap, uniqueTag } from "./harness/context.ts";
import { startReceiver } from "./harness/webhook-receiver.ts";
import { fanoutCli } from "./harness/cli.ts";
import { Fanout, FanoutError } from "../../client/src/index.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwdDpKFRHnpYw=";

async function delivered(key: string, jobId: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const res = await call(base(), "GET", `/v1/jobs/${jobId}/webhook-deliveries`, { token: key });
    if (res.body.deliveries?.some((d: any) => d.status === "delivered")) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no delivery");
}

describe("DELETE /v1/jobs/{id}", () => {
  it("removes an ended job with its results, sessions, deliveries and events, and frees its idempotency key", async () => {
    const receiver = await startReceiver([200]);
    try {
      const { key } = await newTenant(base());
      const tag = uniqueTag("delete");
      const headers = { "idempotency-key": `del-${tag}` };
      const body = {
        inputs: [{ d: fake(tag, 0, "text:done") }],
        agent_prompt_template: "Do it {{ item.d }}",
        model: "openai/gpt-6-luna",
        webhook: { url: receiver.url, secret: SECRET },
      };
      const created = await call(base(), "POST", "/v1/agentic-map", { token: key, body, headers });
      expect(created.status, JSON.stringify(created.body)).toBe(202);
      const jobId = created.body.job_id;
      await waitForJob(base(), key, jobId);
      await delivered(key, jobId);
      const sessions = (await call(base(), "GET", `/v1/jobs/${jobId}/sessions`, { token: key })).body.sessions;
      expect(sessions).toHaveLength(1);

      const other = await newTenant(base(), "other");
      expect((await call(base(), "DELETE", `/v1/jobs/${jobId}`, { token: other.key })).status).toBe(404);
      const deleted = await call(base(), "DELETE", `/v1/jobs/${jobId}`, { token: key });
      expect(deleted.status).toBe(204);
      for (const path of [
        `/v1/jobs/${jobId}`,
        `/v1/jobs/${jobId}/results`,
        `/v1/jobs/${jobId}/events`,
        `/v1/jobs/${jobId}/webhook-deliveries`,
        `/v1/sessions/${sessions[0].session_id}`,
      ]) {
        expect((await call(base(), "GET", path, { token: key })).status, path).toBe(404);
      }
      expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
      expect((await call(base(), "DELETE", `/v1/jobs/${jobId}`, { token: key })).status).toBe(404);
      // The same Idempotency-Key makes a new job now.
      const again = await call(base(), "POST", "/v1/agentic-map", { token: key, body, headers });
      expect(again.status).toBe(202);
      expect(again.body.job_id).not.toBe(jobId);
      await waitForJob(base(), key, again.body.job_id);
    } finally {
      await receiver.close();
    }
  });

  it("refuses a job that has not ended (409), and deletes it once cancelled; the client and the CLI delete too", async () => {
    const { key } = await newTenant(base());
    const created = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("delrun"), ["ok", "ok"], { concurrency: 1 }, 3_000) });
    const jobId = created.body.job_id;
    await waitForStatus(base(), key, jobId, ["running"], 10_000);
    const refused = await call(base(), "DELETE", `/v1/jobs/${jobId}`, { token: key });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "conflict", message: "The job is running; cancel it first, then delete it." });
    const client = new Fanout({ apiKey: key, baseUrl: base() });
    await expect(client.job(jobId).delete()).rejects.toMatchObject({ status: 409, code: "conflict" } satisfies Partial<FanoutError>);
    expect((await call(base(), "POST", `/v1/jobs/${jobId}/cancel`, { token: key })).status).toBe(202);
    await waitForJob(base(), key, jobId);
    await client.job(jobId).delete();
    expect((await call(base(), "GET", `/v1/jobs/${jobId}`, { token: key })).status).toBe(404);
    const done = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("delcli"), ["ok"]) });
    await waitForJob(base(), key, done.body.job_id);
    const cli = await fanoutCli(["delete", done.body.job_id], { FANOUT_API_KEY: key, FANOUT_URL: base() });
    expect(cli).toMatchObject({ code: 0, stdout: `${done.body.job_id} deleted\n` });
    expect((await call(base(), "GET", `/v1/jobs/${done.body.job_id}`, { token: key })).status).toBe(404);
  });
});
