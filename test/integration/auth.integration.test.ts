import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADMIN, countRows, insertFinishedJob, request, tenantWithKey } from "./helpers";

describe("admin routes", () => {
  it("creates a tenant and a key shown once, stored only as a hash", async () => {
    const tenant = await request("POST", "/v1/admin/tenants", { token: ADMIN, body: { name: "acme" } });
    expect(tenant.status).toBe(201);
    expect(tenant.body).toMatchObject({ id: expect.stringMatching(/^ten_/), name: "acme", created_at: expect.any(String) });
    const key = await request("POST", `/v1/admin/tenants/${tenant.body.id}/keys`, { token: ADMIN, body: { name: "ci" } });
    expect(key.status).toBe(201);
    expect(key.body.id).toMatch(/^key_/);
    expect(key.body.key).toMatch(/^fo_[a-z2-7]{52}$/); // 32 random bytes
    expect(key.body.key.startsWith(key.body.prefix)).toBe(true);
    const stored = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?").bind(key.body.id).first<Record<string, unknown>>();
    expect(JSON.stringify(stored)).not.toContain(key.body.key);
    expect(stored?.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses a wrong or missing admin token with 401 and writes nothing", async () => {
    const before = await countRows("tenants");
    for (const token of [undefined, "wrong", "fo_notanadmintoken"]) {
      const res = await request("POST", "/v1/admin/tenants", { token, body: { name: "x" } });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: "unauthorized", message: "Missing or invalid credentials." } });
    }
    expect(await countRows("tenants")).toBe(before);
  });

  it("rejects unknown fields, wrong types and malformed JSON with 400 and field paths", async () => {
    const before = await countRows("tenants");
    const unknown = await request("POST", "/v1/admin/tenants", { token: ADMIN, body: { name: "x", plan: "pro" } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe("invalid_request");
    expect(unknown.body.error.details).toEqual([expect.objectContaining({ path: "(body)", message: expect.stringContaining("plan") })]);
    const wrongType = await request("POST", "/v1/admin/tenants", { token: ADMIN, body: { name: 42 } });
    expect(wrongType.body.error.details).toEqual([expect.objectContaining({ path: "name" })]);
    const malformed = await request("POST", "/v1/admin/tenants", { token: ADMIN, raw: "{name:" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("invalid_json");
    const tooBig = await request("POST", "/v1/admin/tenants", { token: ADMIN, body: { name: "x".repeat(70_000) } });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error.code).toBe("payload_too_large");
    expect(await countRows("tenants")).toBe(before);
  });

  it("404s a key for an unknown tenant and a revoke of an unknown key", async () => {
    const before = await countRows("api_keys");
    const key = await request("POST", "/v1/admin/tenants/ten_nope/keys", { token: ADMIN, body: { name: "ci" } });
    expect(key.status).toBe(404);
    expect(await countRows("api_keys")).toBe(before);
    expect((await request("DELETE", "/v1/admin/keys/key_nope", { token: ADMIN })).status).toBe(404);
  });
});

describe("API keys", () => {
  it("authenticates a live key and records last_used_at", async () => {
    const { key, keyId } = await tenantWithKey();
    const res = await request("GET", "/v1/jobs", { token: key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jobs: [], next_cursor: null });
    await new Promise((r) => setTimeout(r, 50)); // last_used_at is written in waitUntil
    const row = await env.DB.prepare("SELECT last_used_at FROM api_keys WHERE id = ?").bind(keyId).first<{ last_used_at: string | null }>();
    expect(row?.last_used_at).not.toBeNull();
  });

  it("gives the same 401 for a missing, malformed, unknown or revoked key", async () => {
    const { key, keyId } = await tenantWithKey();
    expect((await request("DELETE", `/v1/admin/keys/${keyId}`, { token: ADMIN })).status).toBe(204);
    const bodies = [];
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Basic abc" },
      { authorization: "Bearer fo_unknownkey" },
      { authorization: `Bearer ${key}` },
    ];
    for (const headers of attempts) {
      const res = await request("GET", "/v1/jobs", { headers });
      expect(res.status).toBe(401);
      bodies.push(res.body);
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
  });

  it("does not accept the admin token as an API key, nor an API key on admin routes", async () => {
    const { key } = await tenantWithKey();
    expect((await request("GET", "/v1/jobs", { token: ADMIN })).status).toBe(401);
    expect((await request("POST", "/v1/admin/tenants", { token: key, body: { name: "x" } })).status).toBe(401);
  });

  it("never shows one tenant's job, results, batch or events to another (404)", async () => {
    const a = await tenantWithKey("a");
    const b = await tenantWithKey("b");
    await insertFinishedJob(a.tenantId, "job_ofa");
    expect((await request("GET", "/v1/jobs/job_ofa", { token: a.key })).status).toBe(200);
    for (const path of ["", "/results", "/batch", "/events"]) {
      const res = await request("GET", `/v1/jobs/job_ofa${path}`, { token: b.key });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await request("POST", "/v1/jobs/job_ofa/cancel", { token: b.key })).status).toBe(404);
    expect((await request("GET", "/v1/jobs", { token: b.key })).body.jobs).toEqual([]);
  });
});
