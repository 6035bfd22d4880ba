import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { attemptDelivery } from "../../src/webhooks/deliver";
import { countRows, insertFinishedJob, request, tenantWithKey } from "./helpers";

const valid = { inputs: ["a"], prompt_template: "{{ item }}", model: "openai/x" };

describe("webhook input checks (ALLOW_HTTP_WEBHOOKS=false here)", () => {
  it.each([
    ["not a URL", { url: "not a url" }, "webhook.url"],
    ["ftp://", { url: "ftp://files.example.com/hook" }, "webhook.url"],
    ["http:// where only https is allowed", { url: "http://hooks.example.com/x" }, "webhook.url"],
    ["a secret not in whsec_ form", { url: "https://hooks.example.com/x", secret: "secret123" }, "webhook.secret"],
    ["a whsec_ secret that is too short", { url: "https://hooks.example.com/x", secret: "whsec_c2hvcnQ=" }, "webhook.secret"],
  ])("refuses %s with 400 and writes nothing", async (_name, webhook, path) => {
    const { key } = await tenantWithKey();
    const before = await countRows("jobs");
    const res = await request("POST", "/v1/map", { token: key, body: { ...valid, webhook } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await countRows("jobs")).toBe(before);
  });
});

describe("webhook delivery attempts", () => {
  async function pendingDelivery(id: string): Promise<void> {
    const { tenantId } = await tenantWithKey();
    await insertFinishedJob(tenantId, `job_${id}`);
    await env.DB.prepare(
      `INSERT INTO webhook_deliveries (id, job_id, tenant_id, event_type, url, payload, status, next_attempt_at, created_at)
       VALUES (?, ?, ?, 'MAP_COMPLETED', ?, '{}', 'pending', ?, ?)`,
    )
      .bind(id, `job_${id}`, tenantId, env.TEST_WEBHOOK_SINK, Date.now() - 1, new Date().toISOString())
      .run();
  }

  it("makes one attempt for a duplicated Queue message, never two", async () => {
    await pendingDelivery("whd_dup");
    const message = { type: "deliver_webhook" as const, delivery_id: "whd_dup" };
    await Promise.all([attemptDelivery(env, message), attemptDelivery(env, message), attemptDelivery(env, message)]);
    const attempts = await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_attempts WHERE delivery_id = 'whd_dup'").first<{ n: number }>();
    expect(attempts?.n).toBe(1);
    // A late duplicate of the same message finds the next attempt not yet due, and does nothing.
    await attemptDelivery(env, message);
    const after = await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_attempts WHERE delivery_id = 'whd_dup'").first<{ n: number }>();
    expect(after?.n).toBe(1);
    const delivery = await env.DB.prepare("SELECT status, attempt_count FROM webhook_deliveries WHERE id = 'whd_dup'").first();
    expect(delivery).toEqual({ status: "pending", attempt_count: 1 });
  });

  it("does not move a retrying delivery along its schedule on a manual redeliver", async () => {
    await pendingDelivery("whd_manual");
    const due = Date.now() + 60_000;
    await env.DB.prepare("UPDATE webhook_deliveries SET next_attempt_at = ?, attempt_count = 2, scheduled_attempts = 2 WHERE id = 'whd_manual'")
      .bind(due)
      .run();
    await attemptDelivery(env, { type: "deliver_webhook", delivery_id: "whd_manual", manual: true });
    const row = await env.DB.prepare(
      "SELECT status, attempt_count, scheduled_attempts, next_attempt_at FROM webhook_deliveries WHERE id = 'whd_manual'",
    ).first();
    expect(row).toEqual({ status: "pending", attempt_count: 3, scheduled_attempts: 2, next_attempt_at: due });
    const attempt = await env.DB.prepare("SELECT attempt, status_code, error FROM webhook_attempts WHERE delivery_id = 'whd_manual'").first();
    expect(attempt).toMatchObject({ attempt: 3, status_code: 503, error: "HTTP 503" });
  });

  it("ignores messages for a delivered delivery", async () => {
    await pendingDelivery("whd_done");
    await env.DB.prepare("UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL WHERE id = 'whd_done'").run();
    await attemptDelivery(env, { type: "deliver_webhook", delivery_id: "whd_done" });
    const attempts = await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_attempts WHERE delivery_id = 'whd_done'").first<{ n: number }>();
    expect(attempts?.n).toBe(0);
  });
});
