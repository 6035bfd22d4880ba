/**
 * Hostile requests inside workerd against the real Worker, D1 and Durable Objects: each is a 4xx
 * in the contract's envelope and leaves nothing stored. (Here MAX_REQUEST_BYTES is 64 KiB and
 * MAX_ACTIVE_JOBS_PER_TENANT is 2: see vitest.integration.config.ts.)
 */
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN, countRows, request, tenantWithKey } from "../integration/helpers";

const valid = { inputs: ["a"], prompt_template: "{{ item }}", model: "openai/x" };

function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

async function expectRefusal(res: { status: number; body: any }, status: number, code: string, path?: string): Promise<void> {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe("string");
  if (path) expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
}

describe("refused before anything is stored", () => {
  it.each([
    ["a missing Content-Type", { headers: { "content-type": "" } }, 415, "unsupported_media_type"],
    ["a text/plain body", { headers: { "content-type": "text/plain" } }, 415, "unsupported_media_type"],
    ["a form body", { headers: { "content-type": "application/x-www-form-urlencoded" } }, 415, "unsupported_media_type"],
  ])("%s → %i", async (_name, options, status, code) => {
    const { key } = await tenantWithKey();
    const before = await countRows("jobs");
    const res = await request("POST", "/v1/map", { token: key, raw: JSON.stringify(valid), ...options });
    await expectRefusal(res, status, code);
    expect(await countRows("jobs")).toBe(before);
  });

  it.each([
    ["inputs", { inputs: [nested(5_000)] }],
    ["metadata", { metadata: { deep: nested(5_000) } }],
    ["output_schema", { output_schema: { type: "array", items: nested(5_000) } }],
    ["just past the limit", { inputs: [nested(65)] }],
  ])("JSON nested thousands of levels deep in %s → 400", async (_name, override) => {
    const { key } = await tenantWithKey();
    const before = await countRows("jobs");
    const res = await request("POST", "/v1/map", { token: key, body: { ...valid, ...override } });
    await expectRefusal(res, 400, "invalid_request", "(body)");
    expect(res.body.error.message).toMatch(/at most 64/);
    expect(await countRows("jobs")).toBe(before);
  });

  it.each([
    ["a model name over 200 characters", { model: `openai/${"m".repeat(200)}` }, "model"],
    ["a model name with a control character", { model: "openai/gpt\u0000x" }, "model"],
    ["timeout_secs 0", { timeout_secs: 0 }, "timeout_secs"],
    ["timeout_secs 0.05", { timeout_secs: 0.05 }, "timeout_secs"],
    ["timeout_secs 601", { timeout_secs: 601 }, "timeout_secs"],
    ["a webhook URL over 2,048 characters", { webhook: { url: `https://hooks.example.com/${"x".repeat(2_100)}` } }, "webhook.url"],
    ["a webhook to the metadata address", { webhook: { url: "https://169.254.169.254/latest" } }, "webhook.url"],
    ["a catastrophic-but-refusable regex", { output_schema: { type: "string", pattern: "^(?=a)(a+)+$" } }, "output_schema.pattern"],
    ["a template with range(10**7)", { prompt_template: "{% for x in range(10**7) %}{% endfor %}{{ item }}" }, "prompt_template"],
  ])("%s → 400", async (_name, override, path) => {
    const { key } = await tenantWithKey();
    const before = await countRows("jobs");
    const res = await request("POST", "/v1/map", { token: key, body: { ...valid, ...override } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await countRows("jobs")).toBe(before);
  });
});

describe("values that would change on the way in are refused, not changed", () => {
  it.each([
    ["1e309 in an item", '{"inputs": [{"n": 1e309}], "prompt_template": "{{ item }}", "model": "openai/x"}', /1e309/],
    ["a 400-digit integer", `{"inputs": [${"9".repeat(400)}], "prompt_template": "{{ item }}", "model": "openai/x"}`, /out of range|past what a double holds/],
    ["-2e308 in metadata", '{"inputs": ["a"], "prompt_template": "{{ item }}", "model": "openai/x", "metadata": {"m": -2e308}}', /-2e308/],
  ])("%s → 400, nothing stored", async (_name, raw, message) => {
    const { key } = await tenantWithKey();
    const before = await countRows("jobs");
    const res = await request("POST", "/v1/map", { token: key, raw });
    await expectRefusal(res, 400, "invalid_request", "(body)");
    expect(res.body.error.message).toMatch(message);
    expect(await countRows("jobs")).toBe(before);
  });

  it("numbers a double holds, and strings that look like huge numbers, pass", async () => {
    const { key } = await tenantWithKey();
    const raw =
      '{"inputs": [{"a": 1.7976931348623157e308, "b": 1e-400, "c": "1e309", "d": 0.000001e310}], "prompt_template": "{{ item }}", "model": "openai/x"}';
    const res = await request("POST", "/v1/map?dry_run=true", { token: key, raw });
    // Past the body's checks (this deployment has no OpenAI key: the model is what it refuses).
    expect(res.body.error?.details?.[0]?.path, JSON.stringify(res.body)).toBe("model");
  });

  it("a body that is not valid UTF-8 → 400, never decoded with replacement characters", async () => {
    const { key } = await tenantWithKey();
    const before = await countRows("jobs");
    const text = new TextEncoder().encode('{"inputs": ["caf\u00e9 ?"], "prompt_template": "{{ item }}", "model": "openai/x"}');
    const bytes = new Uint8Array([...text]);
    bytes[bytes.indexOf(63)] = 0xff; // the ? becomes a byte no UTF-8 text holds
    const res = await request("POST", "/v1/map", { token: key, bytes });
    await expectRefusal(res, 400, "invalid_request", "(body)");
    expect(res.body.error.message).toMatch(/not valid UTF-8/);
    expect(await countRows("jobs")).toBe(before);
  });

  it("a category named __proto__, constructor or prototype → 400 at its path", async () => {
    const { key } = await tenantWithKey();
    for (const name of ["__proto__", "constructor", "prototype"]) {
      const res = await request("POST", "/v1/classify", { token: key, body: { inputs: ["a"], model: "openai/x", categories: [{ name: "ok" }, { name }] } });
      await expectRefusal(res, 400, "invalid_request", "categories[1].name");
    }
  });
});

describe("admission cannot be raced past", () => {
  it("20 concurrent submissions against a limit of 2 start exactly 2 jobs; the rest are 429 with Retry-After", async () => {
    const { key, tenantId } = await tenantWithKey();
    // The model tarpit (allowlisted here): the jobs' calls wait, never leave the machine, and are
    // cancelled below.
    const tarpit = new URL(env.TEST_MODEL_TARPIT);
    const put = await request("PUT", "/v1/providers/openai-compatible", {
      token: key,
      body: { api_key: "sk-test-1234", base_url: `https://${tarpit.host}/v1` },
    });
    expect(put.status).toBe(200);
    const body = { ...valid, model: "openai-compatible/m", max_retries: 0 };
    const results = await Promise.all(Array.from({ length: 20 }, () => request("POST", "/v1/map", { token: key, body })));
    const accepted = results.filter((r) => r.status === 202);
    const limited = results.filter((r) => r.status === 429);
    expect(accepted.length).toBe(2);
    expect(limited.length).toBe(18);
    for (const r of limited) {
      expect(r.body.error.code).toBe("rate_limited");
      expect(r.headers.get("retry-after")).toBe("10");
    }
    const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM jobs WHERE tenant_id = ?").bind(tenantId).first<{ n: number }>();
    expect(row?.n).toBe(2);
    for (const r of accepted) await request("POST", `/v1/jobs/${r.body.job_id}/cancel`, { token: key });
  });
});

describe("tenant destinations (production policy: ALLOW_PRIVATE_DESTINATIONS=false here)", () => {
  it.each([
    ["https://127.0.0.1:8080/v1", /loopback/],
    ["https://2130706433/v1", /numeric host forms/],
    ["https://0x7f.1/v1", /numeric host forms/],
    ["https://169.254.169.254/v1", /link-local/],
    ["https://[::ffff:169.254.169.254]/v1", /link-local/],
    ["https://[fd00::1]/v1", /private/],
    ["https://localhost./v1", /trailing dot/],
    ["https://metadata.google.internal/v1", /local name/],
    ["https://100.100.1.1/v1", /carrier-grade NAT/],
  ])("PUT /v1/providers/openai-compatible refuses base_url %s", async (url, message) => {
    const { key } = await tenantWithKey();
    const before = await countRows("provider_credentials");
    const res = await request("PUT", "/v1/providers/openai-compatible", { token: key, body: { api_key: "sk-test-1234", base_url: url } });
    await expectRefusal(res, 400, "invalid_request", "base_url");
    expect(res.body.error.details[0].message).toMatch(message);
    expect(await countRows("provider_credentials")).toBe(before);
  });

  it("refuses agentic tools and MCP servers at private addresses, with the tool's path", async () => {
    const { key } = await tenantWithKey();
    const before = await countRows("jobs");
    const res = await request("POST", "/v1/agentic-map", {
      token: key,
      body: {
        inputs: ["a"],
        agent_prompt_template: "{{ item }}",
        model: "openai/x",
        tools: [
          { type: "http", name: "ok", url: "https://tools.example.com/x" },
          { type: "http", name: "local", url: "https://[::1]:9/x" },
          { type: "mcp", url: "https://10.0.0.7/mcp" },
        ],
      },
    });
    await expectRefusal(res, 400, "invalid_request", "tools[1].url");
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: "tools[2].url" })]));
    expect(res.body.error.details).not.toEqual(expect.arrayContaining([expect.objectContaining({ path: "tools[0].url" })]));
    expect(await countRows("jobs")).toBe(before);
  });
});

describe("admin token", () => {
  it("refuses tokens of any length, including prefixes and extensions of the real one", async () => {
    for (const token of ["", "f", ADMIN.slice(0, -1), `${ADMIN}x`, ADMIN.toUpperCase()]) {
      const res = await exports.default.fetch(
        new Request("http://fanout.test/v1/admin/tenants", {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: "{}",
        }),
      );
      expect(res.status).toBe(401);
    }
  });
});
