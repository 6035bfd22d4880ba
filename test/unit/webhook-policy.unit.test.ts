import { describe, expect, it } from "vitest";
import { DEFAULT_SCHEDULE_SECS, isPrivateHost, retrySchedule, webhookUrlProblem } from "../../src/webhooks/policy";
import { generateSecret, secretProblem, sign } from "../../src/webhooks/signing";
import { Webhook } from "standardwebhooks";

describe("webhook URL policy", () => {
  const prod = { ENVIRONMENT: "production" };
  const dev = { ENVIRONMENT: "development" };

  it("allows http:// only where ALLOW_HTTP_WEBHOOKS (default: outside production) says so", () => {
    expect(webhookUrlProblem(dev, "http://localhost:3000/h")).toBeNull();
    expect(webhookUrlProblem(prod, "http://hooks.example.com/h")).toMatch(/https/);
    expect(webhookUrlProblem({ ...prod, ALLOW_HTTP_WEBHOOKS: "true" }, "http://hooks.example.com/h")).toBeNull();
    expect(webhookUrlProblem({ ...dev, ALLOW_HTTP_WEBHOOKS: "false" }, "http://hooks.example.com/h")).toMatch(/https/);
    expect(webhookUrlProblem(prod, "ftp://x.example/h")).toMatch(/https/);
    expect(webhookUrlProblem(prod, "nope")).toBe("not a URL");
  });

  it.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "0.0.0.0",
    "100.64.0.1",
    "[::1]",
    "[fd00::1]",
    "[fe80::1]",
    "[::ffff:10.0.0.1]",
    "localhost",
  ])("refuses the literal private host %s in production", (host) => {
    expect(isPrivateHost(host)).toBe(true);
    expect(webhookUrlProblem({ ENVIRONMENT: "production" }, `https://${host}/hook`)).toMatch(/private/);
  });

  it.each(["8.8.8.8", "172.32.0.1", "hooks.example.com", "[2606:4700::1]"])("allows the public host %s", (host) => {
    expect(isPrivateHost(host)).toBe(false);
  });

  it("reads the retry schedule from WEBHOOK_RETRY_SCHEDULE_SECS", () => {
    expect(retrySchedule({})).toEqual(DEFAULT_SCHEDULE_SECS);
    expect(DEFAULT_SCHEDULE_SECS).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(retrySchedule({ WEBHOOK_RETRY_SCHEDULE_SECS: "1, 2,3" })).toEqual([1, 2, 3]);
    expect(retrySchedule({ WEBHOOK_RETRY_SCHEDULE_SECS: "1,x" })).toEqual(DEFAULT_SCHEDULE_SECS);
  });
});

describe("webhook signing", () => {
  it("generates whsec_ secrets of 32 random bytes", () => {
    const a = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretProblem(a)).toBeNull();
    expect(generateSecret()).not.toBe(a);
    expect(secretProblem("whsec_" + btoa("x".repeat(65)))).toMatch(/24–64/);
  });

  it("produces signatures the standardwebhooks package accepts", async () => {
    const secret = generateSecret();
    const ts = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: "MAP_COMPLETED", data: { ok: true } });
    const signature = await sign(secret, "whd_1", ts, body);
    const headers = { "webhook-id": "whd_1", "webhook-timestamp": String(ts), "webhook-signature": signature };
    expect(new Webhook(secret).verify(body, headers)).toEqual({ type: "MAP_COMPLETED", data: { ok: true } });
  });
});
