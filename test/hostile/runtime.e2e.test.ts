/**
 * Hostile jobs against a running server (wrangler dev): a poison template fails its item cleanly
 * while another tenant's job completes and /healthz stays fast; a 200 of the wrong shape from a
 * provider is one permanent llm_error; an oversized field is 413 and stores nothing.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allResults, call, newTenant, waitForJob } from "../e2e/harness/api.ts";
import { base, scriptedMap, uniqueTag } from "../e2e/harness/context.ts";

const HEALTHZ_LIMIT_MS = 1_000;

let wrongShape: Server;
let wrongShapeUrl = "";

beforeAll(async () => {
  // An "OpenAI-compatible" server that answers 200 with JSON that is not a chat completion.
  wrongShape = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"choices": null, "id": "x"}'));
  await new Promise<void>((resolve) => wrongShape.listen(0, "127.0.0.1", resolve));
  const address = wrongShape.address();
  wrongShapeUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/v1`;
});

afterAll(() => new Promise<void>((resolve) => wrongShape.close(() => resolve())));

async function healthzWorstMs(until: () => boolean): Promise<number> {
  let worst = 0;
  while (!until()) {
    const started = performance.now();
    const res = await fetch(`${base()}/healthz`);
    await res.text();
    worst = Math.max(worst, performance.now() - started);
    await new Promise((r) => setTimeout(r, 50));
  }
  return worst;
}

describe("poison templates", () => {
  it("fail their items cleanly; another tenant's job completes and /healthz answers within 1 s throughout", async () => {
    const attacker = await newTenant(base(), "attacker");
    const victim = await newTenant(base(), "victim");
    const poison = await call(base(), "POST", "/v1/map", {
      token: attacker.key,
      body: {
        inputs: Array.from({ length: 8 }, (_, i) => ({ n: 10 ** 7 + i, s: "a".repeat(10_000) })),
        prompt_template: "{% for x in range(item.n) %}{% endfor %}{{ item.s.replace('a', item.s) }}",
        model: "openai/gpt-4o-mini",
        max_retries: 3,
      },
    });
    expect(poison.status).toBe(202);
    const tag = uniqueTag("victim");
    const normal = await call(base(), "POST", "/v1/map", { token: victim.key, body: scriptedMap(tag, ["ok", "ok", "ok", "ok"]) });
    expect(normal.status).toBe(202);

    let done = false;
    const watching = healthzWorstMs(() => done);
    const [poisonJob, normalJob] = await Promise.all([
      waitForJob(base(), attacker.key, poison.body.job_id),
      waitForJob(base(), victim.key, normal.body.job_id),
    ]);
    done = true;
    expect(await watching).toBeLessThan(HEALTHZ_LIMIT_MS);

    expect(poisonJob).toMatchObject({ status: "completed", failed: 8, succeeded: 0 });
    for (const result of await allResults(base(), attacker.key, poison.body.job_id)) {
      expect(result).toMatchObject({ success: false, error_kind: "validation", attempts: 1 });
      expect(result.error).toMatch(/range\(\) of 1000000\d items is over the limit/);
    }
    expect(normalJob).toMatchObject({ status: "completed", succeeded: 4 });
  });
});

describe("provider answers and oversized fields", () => {
  it("a 200 of the wrong shape fails the item once as llm_error with a clear message", async () => {
    const { key } = await newTenant(base(), "shape");
    const put = await call(base(), "PUT", "/v1/providers/openai-compatible", { token: key, body: { api_key: "sk-test-1234", base_url: wrongShapeUrl } });
    expect(put.status).toBe(200);
    const created = await call(base(), "POST", "/v1/map", { token: key, body: { inputs: ["a"], prompt_template: "{{ item }}", model: "openai-compatible/m" } });
    expect(created.status).toBe(202);
    await waitForJob(base(), key, created.body.job_id);
    const [result] = await allResults(base(), key, created.body.job_id);
    expect(result).toMatchObject({ success: false, error_kind: "llm_error", attempts: 1 });
    expect(result.error).toMatch(/not a chat completion/);
  });

  it.each([
    ["prompt_template", { prompt_template: `{{ item }}${" ".repeat(3 * 1024 * 1024)}` }],
    ["system_prompt", { system_prompt: "s".repeat(3 * 1024 * 1024) }],
    ["output_schema", { output_schema: { type: "object", description: "d".repeat(3 * 1024 * 1024) } }],
    ["metadata", { metadata: { big: "m".repeat(100_000) } }],
  ])("a %s over its cap is 413 and stores nothing", async (field, override) => {
    const { key } = await newTenant(base(), "big");
    const res = await call(base(), "POST", "/v1/map", { token: key, body: { inputs: ["a"], prompt_template: "{{ item }}", model: "openai/gpt-4o-mini", ...override } });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: "payload_too_large", details: [expect.objectContaining({ path: field })] });
    const jobs = await call(base(), "GET", "/v1/jobs", { token: key });
    expect(jobs.body.jobs).toEqual([]);
  });
});
