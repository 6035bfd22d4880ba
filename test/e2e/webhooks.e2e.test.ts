/** Webhooks on MAP_COMPLETED, against a real receiver; the retry schedule here is 1 s, 1 s, 2 s. */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { call, newTenant, waitForJob } from "./harness/api.ts";
import { base, scriptedMap, uniqueTag } from "./harness/context.ts";
import { freePort } from "./harness/fanout-server.ts";
import { startReceiver } from "./harness/webhook-receiver.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwdDpKFRHnpYw=";

async function runJob(key: string, webhook: Record<string, unknown>, steps = ["ok", "ok"]) {
  const created = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("hook"), steps, { webhook }) });
  expect(created.status).toBe(202);
  await waitForJob(base(), key, created.body.job_id);
  return created.body.job_id as string;
}

async function deliveries(key: string, jobId: string, until: (d: any) => boolean, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(base(), "GET", `/v1/jobs/${jobId}/webhook-deliveries`, { token: key });
    expect(res.status).toBe(200);
    const [delivery] = res.body.deliveries;
    if (delivery && until(delivery)) return delivery;
    if (Date.now() > deadline) throw new Error(`delivery never settled: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("webhooks", () => {
  it("delivers MAP_COMPLETED once, signed per Standard Webhooks (verified by the standardwebhooks package)", async () => {
    const receiver = await startReceiver([200]);
    try {
      const { key } = await newTenant(base());
      const jobId = await runJob(key, { url: receiver.url, secret: SECRET }, ["ok", "401"]);
      const delivery = await deliveries(key, jobId, (d) => d.status === "delivered");
      expect(receiver.received).toHaveLength(1);
      const [req] = receiver.received;
      const payload = new Webhook(SECRET).verify(req.body, req.headers) as any;
      expect(payload).toMatchObject({ type: "MAP_COMPLETED", timestamp: expect.any(String) });
      expect(payload.data).toMatchObject({ job_id: jobId, status: "completed", total: 2, completed: 2, succeeded: 1, failed: 1, total_attempts: 2 });
      expect(req.headers["webhook-id"]).toBe(delivery.id);
      expect(delivery.attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, error: null, next_attempt_at: null })]);
      expect(delivery.attempts[0].response_excerpt.length).toBeLessThanOrEqual(1024);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(receiver.received).toHaveLength(1); // and never again
    } finally {
      await receiver.close();
    }
  });

  it("signs with the tenant's default secret when the job gives none, and a wrong secret fails verification", async () => {
    const receiver = await startReceiver([200]);
    try {
      const { key } = await newTenant(base());
      const { secret } = (await call(base(), "GET", "/v1/webhook-secret", { token: key })).body;
      expect(secret).toMatch(/^whsec_/);
      expect((await call(base(), "GET", "/v1/webhook-secret", { token: key })).body.secret).toBe(secret);
      const jobId = await runJob(key, { url: receiver.url });
      await deliveries(key, jobId, (d) => d.status === "delivered");
      const [req] = receiver.received;
      expect(() => new Webhook(secret).verify(req.body, req.headers)).not.toThrow();
      expect(() => new Webhook(SECRET).verify(req.body, req.headers)).toThrow();
      const tampered = req.body.replace('"completed"', '"cancelled"');
      expect(() => new Webhook(secret).verify(tampered, req.headers)).toThrow();
    } finally {
      await receiver.close();
    }
  });

  it("retries a 500 on the schedule with the same webhook-id until a 200", async () => {
    const receiver = await startReceiver([500, 500, 200]);
    try {
      const { key } = await newTenant(base());
      const jobId = await runJob(key, { url: receiver.url, secret: SECRET });
      const delivery = await deliveries(key, jobId, (d) => d.status === "delivered");
      expect(receiver.received).toHaveLength(3);
      expect(new Set(receiver.received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([delivery.id]));
      for (const r of receiver.received) expect(() => new Webhook(SECRET).verify(r.body, r.headers)).not.toThrow();
      expect(receiver.received[1].at - receiver.received[0].at).toBeGreaterThanOrEqual(900);
      expect(delivery.attempts.map((a: any) => a.status_code)).toEqual([500, 500, 200]);
      expect(delivery.attempts[0]).toMatchObject({ error: "HTTP 500", next_attempt_at: expect.any(String) });
    } finally {
      await receiver.close();
    }
  });

  it("marks a delivery failed when the receiver is down for the whole schedule, then redelivers once it is up", async () => {
    const port = await freePort();
    const { key } = await newTenant(base());
    const jobId = await runJob(key, { url: `http://127.0.0.1:${port}/hooks`, secret: SECRET });
    const failed = await deliveries(key, jobId, (d) => d.status === "failed");
    expect(failed.attempts).toHaveLength(4); // the first try and three retries
    for (const a of failed.attempts) expect(a).toMatchObject({ status_code: null, error: expect.stringContaining("could not connect") });
    const receiver = await startReceiver([200], port);
    try {
      const redeliver = await call(base(), "POST", `/v1/jobs/${jobId}/webhook-deliveries/redeliver`, { token: key });
      expect(redeliver).toMatchObject({ status: 202, body: { delivery_id: failed.id } });
      const delivered = await deliveries(key, jobId, (d) => d.status === "delivered");
      expect(delivered.attempts).toHaveLength(5);
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0].headers["webhook-id"]).toBe(failed.id);
    } finally {
      await receiver.close();
    }
  });

  it("honours Retry-After on a 503 when it is longer than the schedule", async () => {
    const receiver = await startReceiver([503, 200], 0, { 503: { "retry-after": "3" } });
    try {
      const { key } = await newTenant(base());
      const jobId = await runJob(key, { url: receiver.url, secret: SECRET });
      await deliveries(key, jobId, (d) => d.status === "delivered");
      expect(receiver.received).toHaveLength(2);
      expect(receiver.received[1].at - receiver.received[0].at).toBeGreaterThanOrEqual(2_900);
    } finally {
      await receiver.close();
    }
  });

  it("stops retrying after 410 Gone", async () => {
    const receiver = await startReceiver([410, 200]);
    try {
      const { key } = await newTenant(base());
      const jobId = await runJob(key, { url: receiver.url, secret: SECRET });
      const delivery = await deliveries(key, jobId, (d) => d.status === "disabled");
      await new Promise((r) => setTimeout(r, 2_500));
      expect(receiver.received).toHaveLength(1);
      expect(delivery.attempts).toEqual([expect.objectContaining({ status_code: 410 })]);
    } finally {
      await receiver.close();
    }
  });

  it("keeps deliveries and secrets per tenant", async () => {
    const receiver = await startReceiver([200]);
    try {
      const a = await newTenant(base());
      const b = await newTenant(base());
      const jobId = await runJob(a.key, { url: receiver.url });
      await deliveries(a.key, jobId, (d) => d.status === "delivered");
      expect((await call(base(), "GET", `/v1/jobs/${jobId}/webhook-deliveries`, { token: b.key })).status).toBe(404);
      expect((await call(base(), "POST", `/v1/jobs/${jobId}/webhook-deliveries/redeliver`, { token: b.key })).status).toBe(404);
      const secretA = (await call(base(), "GET", "/v1/webhook-secret", { token: a.key })).body.secret;
      const secretB = (await call(base(), "GET", "/v1/webhook-secret", { token: b.key })).body.secret;
      expect(secretA).not.toBe(secretB);
      const rotated = (await call(base(), "POST", "/v1/webhook-secret/rotate", { token: b.key })).body.secret;
      expect(rotated).not.toBe(secretB);
      expect((await call(base(), "GET", "/v1/webhook-secret", { token: a.key })).body.secret).toBe(secretA);
    } finally {
      await receiver.close();
    }
  });

  it("refuses redeliver for a job without a webhook (404)", async () => {
    const { key } = await newTenant(base());
    const created = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("nohook"), ["ok"]) });
    await waitForJob(base(), key, created.body.job_id);
    expect((await call(base(), "POST", `/v1/jobs/${created.body.job_id}/webhook-deliveries/redeliver`, { token: key })).status).toBe(404);
    expect((await call(base(), "GET", `/v1/jobs/${created.body.job_id}/webhook-deliveries`, { token: key })).body).toEqual({ deliveries: [] });
  });
});
