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
});
