/** A recovered job ends again with a new MAP_COMPLETED, and so with a new webhook delivery (round 2). */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { call, newTenant, waitForJob } from "./harness/api.ts";
import { base, scriptedMap, uniqueTag } from "./harness/context.ts";
import { startReceiver } from "./harness/webhook-receiver.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwdDpKFRHnpYw=";

async function deliveredCount(key: string, jobId: string, n: number): Promise<any[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await call(base(), "GET", `/v1/jobs/${jobId}/webhook-deliveries`, { token: key });
    const delivered = res.body.deliveries.filter((d: any) => d.status === "delivered");
    if (delivered.length >= n) return res.body.deliveries;
    if (Date.now() > deadline) throw new Error(`deliveries: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("webhooks after a recover", () => {
  it("delivers the new MAP_COMPLETED as a second delivery, and redeliver targets the latest", async () => {
    const receiver = await startReceiver([200]);
    try {
      const { key } = await newTenant(base());
      const body = scriptedMap(uniqueTag("hook-recover"), ["ok", "401,ok"], { webhook: { url: receiver.url, secret: SECRET }, max_retries: 0 });
      const created = await call(base(), "POST", "/v1/map", { token: key, body });
      const jobId = created.body.job_id;
      await waitForJob(base(), key, jobId);
      await deliveredCount(key, jobId, 1);
      expect((await call(base(), "POST", `/v1/jobs/${jobId}/recover`, { token: key })).status).toBe(202);
      await waitForJob(base(), key, jobId);
      const deliveries = await deliveredCount(key, jobId, 2);
      expect(deliveries.map((d: any) => d.round)).toEqual([1, 2]);
      expect(deliveries[0].id).not.toBe(deliveries[1].id);
      const payloads = receiver.received.map((r) => new Webhook(SECRET).verify(r.body, r.headers) as any);
      expect(payloads.map((p) => [p.data.failed, p.data.succeeded])).toEqual([
        [1, 1],
        [0, 2],
      ]);
      const again = await call(base(), "POST", `/v1/jobs/${jobId}/webhook-deliveries/redeliver`, { token: key });
      expect(again).toMatchObject({ status: 202, body: { delivery_id: deliveries[1].id } });
    } finally {
      await receiver.close();
    }
  });
});
