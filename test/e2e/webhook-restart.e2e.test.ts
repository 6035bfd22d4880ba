/**
 * A webhook retry is waiting in the Queue when the server is killed; local queues lose delayed
 * messages on restart. The job's coordinator notices the overdue delivery and queues it again,
 * so the receiver still gets MAP_COMPLETED: nothing silently lost.
 */
import { afterAll, describe, expect, it } from "vitest";
import { call, newTenant, waitForJob } from "./harness/api.ts";
import { fakeUrl, scriptedMap, uniqueTag } from "./harness/context.ts";
import { startFanout, type FanoutServer } from "./harness/fanout-server.ts";
import { startReceiver } from "./harness/webhook-receiver.ts";

let server: FanoutServer | undefined;
afterAll(async () => {
  await server?.stop();
});

describe("a webhook retry across a restart", () => {
  it("is delivered after the restart", async () => {
    const receiver = await startReceiver([500, 200]);
    try {
      const vars = { OPENAI_BASE_URL: `${fakeUrl()}/v1`, OPENAI_API_KEY: "sk-env-openai-key", WEBHOOK_RETRY_SCHEDULE_SECS: "3" };
      server = await startFanout({ vars });
      const { key } = await newTenant(server.url);
      const created = await call(server.url, "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("hook-restart"), ["ok"], { webhook: { url: receiver.url } }) });
      const jobId = created.body.job_id;
      await waitForJob(server.url, key, jobId);
      for (let i = 0; i < 100 && receiver.received.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(receiver.received).toHaveLength(1); // the 500
      // Killed only once the 500 is on record: from then on a retry waits in the Queue.
      const recorded = async () => (await call(server!.url, "GET", `/v1/jobs/${jobId}/webhook-deliveries`, { token: key })).body.deliveries[0]?.attempts?.length ?? 0;
      for (let i = 0; i < 100 && (await recorded()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await recorded()).toBe(1);

      const { persistDir, port } = server;
      await server.stop("SIGKILL");
      server = await startFanout({ vars, persistDir, port });

      const deadline = Date.now() + 75_000;
      let delivery: any;
      while (Date.now() < deadline) {
        delivery = (await call(server.url, "GET", `/v1/jobs/${jobId}/webhook-deliveries`, { token: key })).body.deliveries[0];
        if (delivery?.status === "delivered") break;
        await new Promise((r) => setTimeout(r, 500));
      }
      expect(delivery).toMatchObject({ status: "delivered" });
      expect(delivery.attempts.map((a: any) => a.status_code)).toEqual([500, 200]);
      expect(receiver.received).toHaveLength(2);
      expect(receiver.received[1].headers["webhook-id"]).toBe(receiver.received[0].headers["webhook-id"]);
    } finally {
      await receiver.close();
    }
  });
});
