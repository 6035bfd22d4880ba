/**
 * Hostile jobs against a running server (wrangler dev): a poison template fails its item cleanly
 * while another tenant's job completes and /healthz stays fast; a 200 of the wrong shape from a
 * provider is one permanent llm_error; an oversized field is 413 and stores nothing.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allResults, call, newTenant, waitForJob } from "../e2e/harness/api.ts";
import { base, scriptedMap, uniqueTag } from "../e2e/harness/context.ts";
import { contention } from "./timed.ts";

const HEALTHZ_LIMIT_MS = 1_000; // on an idle core; scaled by the machine's contention while the test ran (timed.ts)

/** The bound for a run measured while the machine was this busy (the worst of the samples taken around it, at most 3×). */
const healthzLimit = (samples: number[]) => HEALTHZ_LIMIT_MS * Math.min(3, Math.max(...samples));

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

/** Runs `work` while /healthz is asked every 50 ms: its worst answer must come within 1 s, scaled by the machine's contention around it. */
async function healthzStaysFast<T>(work: () => Promise<T>): Promise<T> {
  let done = false;
  const busy = [contention()];
  const watching = healthzWorstMs(() => done);
  let value: T;
  try {
    value = await work();
  } finally {
    done = true;
  }
  busy.push(contention());
  expect(await watching).toBeLessThan(healthzLimit(busy));
  return value;
}

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
        model: "openai/gpt-6-luna",
        max_retries: 3,
      },
    });
    expect(poison.status).toBe(202);
    const tag = uniqueTag("victim");
    const normal = await call(base(), "POST", "/v1/map", { token: victim.key, body: scriptedMap(tag, ["ok", "ok", "ok", "ok"]) });
    expect(normal.status).toBe(202);

    const { poisonJob, normalJob } = await healthzStaysFast(async () => {
      const [poisonJob, normalJob] = await Promise.all([
        waitForJob(base(), attacker.key, poison.body.job_id),
        waitForJob(base(), victim.key, normal.body.job_id),
      ]);
      return { poisonJob, normalJob };
    });

    expect(poisonJob).toMatchObject({ status: "completed", failed: 8, succeeded: 0 });
    for (const result of await allResults(base(), attacker.key, poison.body.job_id)) {
      expect(result).toMatchObject({ success: false, error_kind: "validation", attempts: 1 });
      expect(result.error).toMatch(/range\(\) would produce a list of 1000000\d elements/);
    }
    expect(normalJob).toMatchObject({ status: "completed", succeeded: 4 });
  });
});

describe("renders bounded per request and per alarm, not only per item", () => {
  // ~40,000 steps of the renderer each (a tenth of the e2e server's per-render bound and more): 2,000
  // of them rendered in one request took minutes of one core before the per-invocation bound.
  const heavy = "{% for i in range(5000) %}{{ i }}{% endfor %}{{ item }}";

  it("a dry run and a budget check over 2,000 heavy items answer from a sample, and /healthz answers within 1 s throughout", async () => {
    const { key } = await newTenant(base(), "heavy-estimate");
    const body = {
      inputs: Array.from({ length: 2_000 }, (_, i) => `item ${i} ${"x".repeat(i % 50)}`),
      prompt_template: heavy,
      model: "openai/gpt-6-luna",
      max_tokens: 5,
    };
    const { dry, over } = await healthzStaysFast(async () => {
      const dry = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body });
      const over = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, token_budget: { total: 1_000 } } });
      return { dry, over };
    });
    expect(dry.status).toBe(200);
    expect(dry.body.estimate.calls).toBe(2_000);
    expect(dry.body.estimate.method).toMatch(/\d+ of 2000 prompts rendered within one request's CPU bound/);
    expect(dry.body.estimate.input_tokens).toBeGreaterThan(2_000 * 4_000); // ~19,000 characters of numbers a prompt
    expect(over).toMatchObject({ status: 422, body: { error: { code: "token_budget_exceeded" } } });
    // A dry run runs the submission's checks, the budget's too: the same 422, nothing stored.
    const dryOver = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body: { ...body, token_budget: { total: 1_000 } } });
    expect(dryOver).toMatchObject({ status: 422, body: { error: { code: "token_budget_exceeded" } } });
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });

  it("membership tests are charged per element: a dry run of 20 items scanning 10,000-element lists in a loop answers at once; /healthz answers within 1 s throughout", async () => {
    const { key } = await newTenant(base(), "membership");
    const list = Array.from({ length: 10_000 }, (_, i) => -i - 1); // no member: each scan is the whole list
    const body = {
      inputs: Array.from({ length: 20 }, () => ({ l: list })),
      prompt_template: "{% for i in range(10000) %}{% if i in item.l %}x{% endif %}{% endfor %}{{ item.l | length }}",
      model: "openai/gpt-6-luna",
    };
    const { dry } = await healthzStaysFast(async () => {
      const dry = await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body });
      return { dry };
    });
    expect(dry.status).toBe(200);
    expect(dry.body.estimate.calls).toBe(20);
  });

  it("a batch job's heavy lines go out in several provider batches, one alarm's renders each; every item gets its answer; /healthz answers within 1 s throughout", async () => {
    const { key } = await newTenant(base(), "heavy-batch");
    const tag = uniqueTag("heavy-batch");
    const inputs = Array.from({ length: 40 }, (_, i) => `<<fake tag=${tag} id=${i}>>`);
    const { job } = await healthzStaysFast(async () => {
      const created = await call(base(), "POST", "/v1/map", {
        token: key,
        body: { inputs, prompt_template: heavy, model: "openai/gpt-6-luna", execution: { mode: "batch" } },
      });
      expect(created.status).toBe(202);
      const job = await waitForJob(base(), key, created.body.job_id);
      return { job };
    });
    expect(job).toMatchObject({ status: "completed", succeeded: 40 });
    expect(job.batches.length).toBeGreaterThan(1);
    expect(job.batches.reduce((n: number, b: { requests: number }) => n + b.requests, 0)).toBe(40);
  });
});

describe("blocking bounded before it is built", () => {
  it("a trigram blocking of 1,100 keys of 2,000 characters is a 422 counted before any index; /healthz answers within 1 s throughout", async () => {
    const { key } = await newTenant(base(), "trigram");
    const inputs = Array.from({ length: 1_100 }, (_, i) => ({ name: `${i} `.padEnd(2_000, "abcdefghij") }));
    const { res } = await healthzStaysFast(async () => {
      const res = await call(base(), "POST", "/v1/resolve", {
        token: key,
        body: { inputs, model: "openai/gpt-6-luna", comparison_template: "{{ item_a }} {{ item_b }}", blocking: { keys: ["name"], method: "trigram" } },
      });
      return { res };
    });
    expect(res).toMatchObject({ status: 422, body: { error: { code: "too_many_comparisons", details: { trigrams: 1_101_100 } } } });
  });
});

describe("counted before parsed", () => {
  // Within the e2e server's 8 MiB cap (global-setup.ts); the scans of 30 MB bodies are timed in parse-bounds.unit.test.ts.
  it("a body of 3 million items, a 500,000-key object and an XML document of 600,000 attributes are 400s; /healthz answers within 1 s throughout", async () => {
    const { key } = await newTenant(base(), "counts");
    const { items, object, xml } = await healthzStaysFast(async () => {
      const items = await call(base(), "POST", "/v1/map", {
        token: key,
        rawBody: `{"inputs": [${"0,".repeat(3_000_000)}0], "prompt_template": "{{ item }}", "model": "openai/gpt-6-luna"}`,
      });
      const keys = Array.from({ length: 500_000 }, (_, i) => `"k${i}":1`).join(",");
      const object = await call(base(), "POST", "/v1/pipelines", { token: key, rawBody: `{"inputs": {${keys}}, "steps": []}` });
      const attributes = Array.from({ length: 2_000 }, (_, i) => `a${i}=""`).join(" ");
      const xml = await call(base(), "POST", "/v1/pipelines", {
        token: key,
        rawBody: `<task>${`<input ${attributes}/>`.repeat(300)}</task>`,
        headers: { "content-type": "application/xml" },
      });
      return { items, object, xml };
    });
    expect(items).toMatchObject({ status: 400, body: { error: { code: "invalid_request" } } });
    expect(items.body.error.message).toMatch(/more than 100000 members/);
    expect(object).toMatchObject({ status: 400, body: { error: { code: "invalid_request" } } });
    expect(xml).toMatchObject({ status: 400, body: { error: { code: "invalid_xml" } } });
    expect(xml.body.error.message).toMatch(/more than 50000 attributes/);
    const jobs = await call(base(), "GET", "/v1/jobs", { token: key });
    expect(jobs.body.jobs).toEqual([]);
  });

  it("a slice(10**8) template is 400 at submission, in a job and a dry run; a slice(item.n) fails its item cleanly", async () => {
    const { key } = await newTenant(base(), "slice");
    const body = { inputs: [[1, 2, 3]], prompt_template: "{{ item | slice(100000000) }}", model: "openai/gpt-6-luna" };
    for (const path of ["/v1/map", "/v1/map?dry_run=true"]) {
      const res = await call(base(), "POST", path, { token: key, body });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/slice\(\) would produce a list of 100000000 elements/);
    }
    const created = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { ...body, inputs: [{ l: [1, 2, 3], n: 10 ** 8 }], prompt_template: "{{ item.l | slice(item.n) }}", max_retries: 1 },
    });
    expect(created.status).toBe(202);
    expect(await waitForJob(base(), key, created.body.job_id)).toMatchObject({ status: "completed", failed: 1 });
    const [result] = await allResults(base(), key, created.body.job_id);
    expect(result).toMatchObject({ success: false, error_kind: "validation", attempts: 1 });
    expect(result.error).toMatch(/slice\(\) would produce a list of 100000000 elements/);
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
    const res = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { inputs: ["a"], prompt_template: "{{ item }}", model: "openai/gpt-6-luna", ...override },
    });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: "payload_too_large", details: [expect.objectContaining({ path: field })] });
    const jobs = await call(base(), "GET", "/v1/jobs", { token: key });
    expect(jobs.body.jobs).toEqual([]);
  });
});
