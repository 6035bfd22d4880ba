import { describe, expect, it } from "vitest";
import { countRows, insertFinishedJob, request, tenantWithKey } from "./helpers";

const valid = {
  inputs: ["a", "b"],
  prompt_template: "Say {{ item }}",
  output_schema: { type: "object", properties: { echo: { type: "string" } }, required: ["echo"] },
  model: "openai/gpt-6-luna",
};

const cases: [string, Record<string, unknown>, number, string, string][] = [
  ["template without item", { prompt_template: "Say hello" }, 400, "template_missing_item", "prompt_template"],
  ["loop variable named item only", { prompt_template: "{% for item in xs %}{{ item }}{% endfor %}" }, 400, "template_missing_item", "prompt_template"],
  ["template syntax error", { prompt_template: "Say {{ item " }, 400, "template_syntax", "prompt_template"],
  ["a filter the renderer lacks", { prompt_template: "{{ item | random }}" }, 400, "unsupported_template_feature", "prompt_template"],
  ["invalid schema", { output_schema: { type: "objekt" } }, 400, "invalid_output_schema", "output_schema.type"],
  ["dangling $ref", { output_schema: { $ref: "#/$defs/missing" } }, 400, "invalid_output_schema", "output_schema"],
  ["unknown provider", { model: "mystery/model-1" }, 400, "unknown_provider", "model"],
  ["model without a name", { model: "openai/" }, 400, "invalid_request", "model"],
  ["empty inputs", { inputs: [] }, 400, "invalid_request", "inputs"],
  ["non-array inputs", { inputs: "abc" }, 400, "invalid_request", "inputs"],
  ["concurrency 0", { concurrency: 0 }, 400, "invalid_request", "concurrency"],
  ["concurrency 1001", { concurrency: 1001 }, 400, "invalid_request", "concurrency"],
  ["max_retries 11", { max_retries: 11 }, 400, "invalid_request", "max_retries"],
  ["unknown field", { prompt: "typo" }, 400, "invalid_request", "(body)"],
  ["webhook secret not whsec_", { webhook: { url: "https://x.example/h", secret: "plain" } }, 400, "invalid_request", "webhook.secret"],
  ["one item over MAX_ITEM_BYTES (1000 here)", { inputs: ["a", "x".repeat(2_000)] }, 413, "payload_too_large", "inputs[1]"],
  ["an item under MAX_ITEM_BYTES in characters, over it in UTF-8 bytes", { inputs: ["é".repeat(400), "é".repeat(550)] }, 413, "payload_too_large", "inputs[1]"],
  ["more items than MAX_ITEMS_PER_JOB (5 here)", { inputs: [1, 2, 3, 4, 5, 6] }, 413, "payload_too_large", "inputs"],
  ["body over MAX_REQUEST_BYTES (64 KiB here)", { inputs: ["x".repeat(70_000)] }, 413, "payload_too_large", "(body)"],
];

describe("POST /v1/map rejects bad input before anything is stored", () => {
  it.each(cases)("%s", async (_name, override, status, code, path) => {
    const { key } = await tenantWithKey();
    const before = await countRows("jobs");
    const res = await request("POST", "/v1/map", { token: key, body: { ...valid, ...override } });
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await countRows("jobs")).toBe(before);
  });

  it("refuses workers-ai when the deployment has no AI binding", async () => {
    const { key } = await tenantWithKey();
    const res = await request("POST", "/v1/map", { token: key, body: { ...valid, model: "workers-ai/@cf/meta/llama-3.1-8b-instruct" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_request", details: [{ path: "model", message: expect.stringContaining("not bound") }] });
  });

  it("refuses a provider with no credential anywhere, naming how to add one", async () => {
    const { key } = await tenantWithKey();
    const before = await countRows("jobs");
    const res = await request("POST", "/v1/map", { token: key, body: valid });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("PUT /v1/providers/openai");
    expect(await countRows("jobs")).toBe(before);
  });
});

describe("active jobs per tenant (MAX_ACTIVE_JOBS_PER_TENANT=2 here)", () => {
  it("answers 429 rate_limited with Retry-After once a tenant has that many jobs running", async () => {
    const { key, tenantId } = await tenantWithKey();
    await request("PUT", "/v1/providers/openai", { token: key, body: { api_key: "sk-test-1234", base_url: "https://models.example.com/v1" } });
    await insertFinishedJob(tenantId, `job_run1_${tenantId}`, "running");
    await insertFinishedJob(tenantId, `job_run2_${tenantId}`, "queued");
    await insertFinishedJob(tenantId, `job_done_${tenantId}`, "completed");
    const before = await countRows("jobs");
    const res = await request("POST", "/v1/map", { token: key, body: valid });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe("rate_limited");
    expect(res.headers.get("retry-after")).toBe("10");
    expect(await countRows("jobs")).toBe(before);
  });
});
