import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { countRows, request, tenantWithKey } from "./helpers";

describe("provider credentials", () => {
  it("stores a key encrypted, shows only its last 4, lists and deletes it", async () => {
    const { key, tenantId } = await tenantWithKey();
    const secret = "sk-test-abcdefghijklmnop1234";
    const put = await request("PUT", "/v1/providers/openai", { token: key, body: { api_key: secret, base_url: "https://gw.example/v1" } });
    expect(put).toMatchObject({ status: 200, body: { provider: "openai", base_url: "https://gw.example/v1", key_last4: "1234" } });
    expect(JSON.stringify(put.body)).not.toContain(secret);

    const row = await env.DB.prepare("SELECT * FROM provider_credentials WHERE tenant_id = ?").bind(tenantId).first<Record<string, string>>();
    expect(row?.api_key_enc).toBeTruthy();
    expect(JSON.stringify(row)).not.toContain("abcdefghijklmnop");

    const list = await request("GET", "/v1/providers", { token: key });
    expect(list.body).toEqual({ providers: [{ provider: "openai", base_url: "https://gw.example/v1", key_last4: "1234", rate_limits: null }] });
    expect(JSON.stringify(list.body)).not.toContain(secret);

    expect((await request("DELETE", "/v1/providers/openai", { token: key })).status).toBe(204);
    expect((await request("DELETE", "/v1/providers/openai", { token: key })).status).toBe(404);
    expect((await request("GET", "/v1/providers", { token: key })).body.providers).toEqual([]);
  });

  it("re-encrypts with a fresh IV each time (same key, different ciphertext)", async () => {
    const { key, tenantId } = await tenantWithKey();
    await request("PUT", "/v1/providers/anthropic", { token: key, body: { api_key: "sk-ant-same" } });
    const first = await env.DB.prepare("SELECT api_key_enc FROM provider_credentials WHERE tenant_id = ?").bind(tenantId).first<{ api_key_enc: string }>();
    await request("PUT", "/v1/providers/anthropic", { token: key, body: { api_key: "sk-ant-same" } });
    const second = await env.DB.prepare("SELECT api_key_enc FROM provider_credentials WHERE tenant_id = ?").bind(tenantId).first<{ api_key_enc: string }>();
    expect(first?.api_key_enc).not.toEqual(second?.api_key_enc);
  });

  it("rejects unknown providers, keyless providers and bad bodies without writing", async () => {
    const { key } = await tenantWithKey();
    const before = await countRows("provider_credentials");
    const unknown = await request("PUT", "/v1/providers/mystery", { token: key, body: { api_key: "x" } });
    expect(unknown).toMatchObject({ status: 400, body: { error: { code: "unknown_provider" } } });
    const keyless = await request("PUT", "/v1/providers/workers-ai", { token: key, body: { api_key: "x" } });
    expect(keyless).toMatchObject({ status: 400, body: { error: { code: "invalid_request" } } });
    const empty = await request("PUT", "/v1/providers/openai", { token: key, body: { api_key: "" } });
    expect(empty.body.error.details[0].path).toBe("api_key");
    const badUrl = await request("PUT", "/v1/providers/openai", { token: key, body: { api_key: "k", base_url: "ftp://x" } });
    expect(badUrl.body.error.details[0].path).toBe("base_url");
    expect(await countRows("provider_credentials")).toBe(before);
  });

  it("keeps one tenant's credentials from another", async () => {
    const a = await tenantWithKey("a");
    const b = await tenantWithKey("b");
    await request("PUT", "/v1/providers/openai", { token: a.key, body: { api_key: "sk-a-1111" } });
    expect((await request("GET", "/v1/providers", { token: b.key })).body.providers).toEqual([]);
    expect((await request("DELETE", "/v1/providers/openai", { token: b.key })).status).toBe(404);
    expect((await request("GET", "/v1/providers", { token: a.key })).body.providers).toHaveLength(1);
  });

  it("stores a pool of deployments, each key sealed, and lists them without secrets; the first deployment is the credential's own endpoint", async () => {
    const { key, tenantId } = await tenantWithKey();
    const body = {
      deployments: [
        { base_url: "https://east.example/v1", api_key: "sk-east-secret-aaaa", weight: 3, rate_limits: { "*": { rpm: 600 } } },
        { base_url: "https://west.example/v1", api_key: "sk-west-secret-bbbb" },
      ],
    };
    const put = await request("PUT", "/v1/providers/openai", { token: key, body });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ base_url: "https://east.example/v1", key_last4: "aaaa", rate_limits: { "*": { rpm: 600, tpm: null } } });
    expect(put.body.deployments).toEqual([
      { base_url: "https://east.example/v1", key_last4: "aaaa", weight: 3, rate_limits: { "*": { rpm: 600, tpm: null } } },
      { base_url: "https://west.example/v1", key_last4: "bbbb", weight: 1, rate_limits: null },
    ]);
    const row = await env.DB.prepare("SELECT * FROM provider_credentials WHERE tenant_id = ?").bind(tenantId).first<Record<string, string>>();
    expect(JSON.stringify(row)).not.toContain("secret");
    const list = await request("GET", "/v1/providers", { token: key });
    expect(JSON.stringify(list.body)).not.toContain("secret");
    expect(list.body.providers[0].deployments.map((d: { circuit: string }) => d.circuit)).toEqual(["closed", "closed"]);
    // One endpoint again: the pool is gone.
    await request("PUT", "/v1/providers/openai", { token: key, body: { api_key: "sk-one-cccc" } });
    expect((await request("GET", "/v1/providers", { token: key })).body.providers[0].deployments).toBeUndefined();
  });

  it("refuses a pool that also names its own key, an empty or too large pool, a bad weight and a refused destination, storing nothing", async () => {
    const { key } = await tenantWithKey();
    const before = await countRows("provider_credentials");
    const one = { api_key: "sk-d", base_url: "https://d.example/v1" };
    const cases: [Record<string, unknown>, string][] = [
      [{ api_key: "sk-own", deployments: [one] }, "deployments"],
      [{ deployments: [] }, "deployments"],
      [{ deployments: Array.from({ length: 9 }, () => one) }, "deployments"],
      [{ deployments: [{ ...one, weight: 0 }] }, "deployments[0].weight"],
      [{ deployments: [one, { ...one, base_url: "https://169.254.169.254/v1" }] }, "deployments[1].base_url"],
      [{}, "api_key"],
    ];
    for (const [body, path] of cases) {
      const res = await request("PUT", "/v1/providers/openai", { token: key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(
        res.body.error.details.map((d: { path: string }) => d.path),
        JSON.stringify(res.body),
      ).toContain(path);
    }
    expect(await countRows("provider_credentials")).toBe(before);
  });
});
