/**
 * The OpenAPI document tells the truth: every operation it lists is called here — each operator,
 * each stage kind's results, the event streams, the error answers — and `call()`/`readSse` check
 * every response and event against /openapi.json (harness/openapi-check.ts). The last test fails
 * when an operation of the document was not met with a success here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, allResults, call, newTenant, openEvents, readSse, waitForJob, waitForStatus, type Tenant } from "./harness/api.ts";
import { base, scriptedMap, uniqueTag } from "./harness/context.ts";
import { openApiCheck } from "./harness/openapi-check.ts";
import { example, exampleText } from "./harness/readme.ts";
import { startReceiver, type Receiver } from "./harness/webhook-receiver.ts";

let tenant: Tenant;
let receiver: Receiver;
beforeAll(async () => {
  tenant = await newTenant(base(), "openapi");
  receiver = await startReceiver([200]);
});
afterAll(() => receiver.close());

const as = (path: string, method = "GET", body?: unknown, headers?: Record<string, string>) => call(base(), method, path, { token: tenant.key, body, headers });

/** Reads a job's whole event stream (each event checked against JobEvent) and every stage's results. */
async function readEverything(jobId: string): Promise<void> {
  const events = await readSse(await openEvents(base(), tenant.key, jobId));
  expect(events.at(-1)?.event).toBe("MAP_COMPLETED");
  const job = (await as(`/v1/jobs/${jobId}`)).body;
  for (const stage of job.stages ?? []) await allResults(base(), tenant.key, jobId, `&stage=${encodeURIComponent(stage.name)}`);
  await allResults(base(), tenant.key, jobId, "&order=completion&status=failed");
}

describe("the OpenAPI document", () => {
  it("is served with this deployment as its server", async () => {
    const doc = await (await fetch(`${base()}/openapi.json`)).json();
    expect(doc.servers).toEqual([{ url: base(), description: "This deployment" }]);
    expect(doc.info.license).toEqual({ name: "MIT", identifier: "MIT" });
  });

  it("admin routes: created, refused, revoked", async () => {
    expect((await call(base(), "POST", "/v1/admin/tenants", { body: { name: "x" } })).status).toBe(401);
    expect((await call(base(), "POST", "/v1/admin/tenants", { token: ADMIN_TOKEN, body: {} })).status).toBe(400);
    expect((await call(base(), "POST", "/v1/admin/tenants", { token: ADMIN_TOKEN, rawBody: "name=x", headers: { "content-type": "text/plain" } })).status).toBe(
      415,
    );
    expect((await call(base(), "POST", "/v1/admin/tenants/ten_nope/keys", { token: ADMIN_TOKEN, body: { name: "k" } })).status).toBe(404);
    const key = await call(base(), "POST", `/v1/admin/tenants/${tenant.tenantId}/keys`, { token: ADMIN_TOKEN, body: { name: "spare" } });
    expect(key.status).toBe(201);
    expect((await call(base(), "DELETE", `/v1/admin/keys/${key.body.id}`, { token: ADMIN_TOKEN })).status).toBe(204);
    expect((await call(base(), "DELETE", `/v1/admin/keys/${key.body.id}`, { token: ADMIN_TOKEN })).status).toBe(404);
  });

  it("provider credentials: stored, listed, deleted", async () => {
    expect((await as("/v1/providers/openai", "PUT", { api_key: "sk-test-1234" })).status).toBe(200);
    expect((await as("/v1/providers/nope", "PUT", { api_key: "sk-test-1234" })).status).toBe(400);
    expect((await as("/v1/providers")).body.providers).toHaveLength(1);
    expect((await as("/v1/providers/openai", "DELETE")).status).toBe(204);
    expect((await as("/v1/providers/openai", "DELETE")).status).toBe(404);
    expect((await as("/v1/telemetry", "PUT", { otlp_endpoint: "https://collector.example/v1/traces", headers: { "x-key": "k" } })).status).toBe(200);
    expect((await as("/v1/telemetry")).body).toMatchObject({ header_names: ["x-key"], last_export: null });
    expect((await as("/v1/telemetry", "DELETE")).status).toBe(204);
    expect((await as("/v1/telemetry")).status).toBe(404);
  });

  it("map: accepted, replayed, waited for, estimated, streamed, refused", async () => {
    const body = scriptedMap(uniqueTag("oa-map"), ["ok", "bad", "ok"], { max_retries: 0 });
    const created = await as("/v1/map", "POST", body, { "idempotency-key": "oa-1" });
    expect(created.status).toBe(202);
    expect((await as("/v1/map", "POST", body, { "idempotency-key": "oa-1" })).status).toBe(200);
    expect((await as("/v1/map", "POST", { ...body, concurrency: 3 }, { "idempotency-key": "oa-1" })).status).toBe(422);
    await readEverything(created.body.job_id);
    expect((await as(`/v1/jobs/${created.body.job_id}/batch`)).status).toBe(200);
    expect((await as("/v1/map?dry_run=true", "POST", body)).status).toBe(200);
    expect((await as("/v1/map?wait=true", "POST", body)).status).toBe(200);
    const streamed = await fetch(`${base()}/v1/map`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    expect(streamed.status).toBe(200);
    expect((await readSse(streamed)).at(-1)?.event).toBe("MAP_COMPLETED");
    expect((await as("/v1/map", "POST", { ...body, inputs: "no" })).status).toBe(400);
    expect((await as("/v1/map", "POST", { ...body, inputs: Array.from({ length: 10_001 }, () => 1) })).status).toBe(413);
    expect((await as(`/v1/jobs/${created.body.job_id}/audit`)).status).toBe(404);

    // Recover: nothing to re-run is 409; its failed item re-runs with an optional body.
    const recovered = await as(`/v1/jobs/${created.body.job_id}/recover`, "POST", { max_retries: 0 });
    expect(recovered.status).toBe(202);
    await waitForJob(base(), tenant.key, created.body.job_id);
    const done = (await as("/v1/map?wait=true", "POST", scriptedMap(uniqueTag("oa-ok"), ["ok"]))).body;
    expect((await as(`/v1/jobs/${done.job_id}/recover`, "POST")).status).toBe(409);
    expect((await as(`/v1/jobs/${done.job_id}/resume`, "POST")).status).toBe(409);
  });

  it("reduce, map-reduce, pipelines (JSON and XML), agentic-map and the semantic operators: each stage's results and events", async () => {
    for (const [path, name] of [
      ["/v1/reduce", "POST /v1/reduce?wait=true"],
      ["/v1/map-reduce", "POST /v1/map-reduce?wait=true"],
      ["/v1/pipelines", "POST /v1/pipelines?wait=true"],
    ] as const) {
      const created = await as(path, "POST", example(name));
      expect(created.status, name).toBe(202);
      await readEverything(created.body.job_id);
    }
    // Not the guide's agentic example: its fake-model script runs once per server start, and the guide's test runs it.
    const agent = await as("/v1/agentic-map", "POST", { inputs: ["Say hello"], agent_prompt_template: "{{ item }}", model: "openai/gpt-6-luna" });
    expect(agent.status).toBe(202);
    await readEverything(agent.body.job_id);
    const xml = await call(base(), "POST", "/v1/pipelines", {
      token: tenant.key,
      rawBody: exampleText("POST /v1/pipelines (XML)", "xml"),
      headers: { "content-type": "application/xml" },
    });
    expect(xml.status).toBe(202);
    await readEverything(xml.body.job_id);

    for (const [path, body] of [
      ["/v1/filter", { inputs: ["a tide pool", "a desert"], predicate_template: "Is {{ item }} wet?", model: "openai/gpt-6-luna" }],
      ["/v1/classify", { inputs: ["rain"], categories: [{ name: "wet" }, { name: "dry" }], model: "openai/gpt-6-luna" }],
      ["/v1/rank", { inputs: ["a", "b", "c"], criteria: "wetness", k: 2, model: "openai/gpt-6-luna" }],
      ["/v1/embed", { inputs: ["rain", "snow"], model: "openai/text-embedding-3-small", dimensions: 8 }],
      ["/v1/join", { left: ["rain"], right: ["wet", "dry"], predicate_template: "{{ left }} is {{ right }}?", model: "openai/gpt-6-luna", strategy: "auto" }],
      [
        "/v1/resolve",
        {
          inputs: [{ n: "acme" }, { n: "acme" }, { n: "globex" }],
          comparison_template: "{{ item_a }} {{ item_b }}",
          blocking: { keys: ["n"] },
          resolution_template: "{{ items }}",
          model: "openai/gpt-6-luna",
        },
      ],
    ] as const) {
      const created = await as(path, "POST", body);
      expect(created.status, path).toBe(202);
      await readEverything(created.body.job_id);
    }

    const jobs = (await as("/v1/jobs?limit=100")).body.jobs as { id: string; type: string }[];
    // An evaluation of the filter job: a judge over its results, and gold labels.
    const filtered = jobs.find((j) => j.type === "filter");
    const evaluation = await as("/v1/evaluations", "POST", {
      job_id: filtered?.id,
      judge: { model: "openai/gpt-6-luna", criteria: [{ name: "sound", description: "The answer follows" }] },
      gold: [{ index: 0, expected: true }],
    });
    expect(evaluation.status).toBe(202);
    await readEverything(evaluation.body.job_id);
    expect((await as(`/v1/jobs/${filtered?.id}`)).body.evaluations).toEqual([evaluation.body.job_id]);
    const mapReduce = jobs.find((j) => j.type === "map_reduce");
    expect((await as(`/v1/jobs/${mapReduce?.id}/audit`)).status).toBe(200);
    const agentic = jobs.find((j) => j.type === "agentic_map");
    const sessions = (await as(`/v1/jobs/${agentic?.id}/sessions`)).body.sessions;
    expect(sessions.length).toBeGreaterThan(0);
    expect((await as(`/v1/sessions/${sessions[0].session_id}`)).status).toBe(200);
    expect((await as("/v1/sessions/ses_nope")).status).toBe(404);
  });

  it("jobs: listed, read, refused while running, cancelled, deleted", async () => {
    expect((await as("/v1/jobs?status=nope")).status).toBe(400);
    expect((await as("/v1/jobs/job_nope")).status).toBe(404);
    // Its own tenant: the call still in flight after the cancel holds a slot of the tenant's limit for the model.
    const other = await newTenant(base(), "openapi-slow");
    const slow = await call(base(), "POST", "/v1/map", { token: other.key, body: scriptedMap(uniqueTag("oa-slow"), ["ok", "ok"], { concurrency: 1 }, 10_000) });
    await waitForStatus(base(), other.key, slow.body.job_id, ["running"]);
    const asOther = (path: string, method = "GET") => call(base(), method, path, { token: other.key });
    expect((await asOther(`/v1/jobs/${slow.body.job_id}/batch`)).status).toBe(409);
    expect((await asOther(`/v1/jobs/${slow.body.job_id}`, "DELETE")).status).toBe(409);
    expect((await asOther(`/v1/jobs/${slow.body.job_id}/results?cursor=nope`)).status).toBe(400);
    expect((await asOther(`/v1/jobs/${slow.body.job_id}/cancel`, "POST")).status).toBe(202);
    await waitForJob(base(), other.key, slow.body.job_id);
    expect((await asOther(`/v1/jobs/${slow.body.job_id}`, "DELETE")).status).toBe(204);
  });

  it("a budget's pause, and resume", async () => {
    const body = scriptedMap(uniqueTag("oa-budget"), ["bad,bad,ok", "bad,bad,ok"], { max_tokens: 20, concurrency: 1, max_retries: 2 });
    const total = (await as("/v1/map?dry_run=true", "POST", body)).body.estimate.total_tokens;
    const created = await as("/v1/map", "POST", { ...body, token_budget: { total } });
    await waitForStatus(base(), tenant.key, created.body.job_id, ["paused"], 30_000);
    expect((await as(`/v1/jobs/${created.body.job_id}/resume`, "POST", { token_budget: { total: total * 10 } })).status).toBe(202);
    await readEverything(created.body.job_id);
  });

  it("webhooks: the secret, its rotation, deliveries and a redelivery", async () => {
    expect((await as("/v1/webhook-secret")).status).toBe(200);
    expect((await as("/v1/webhook-secret/rotate", "POST")).status).toBe(200);
    const hooked = await as("/v1/map?wait=true", "POST", scriptedMap(uniqueTag("oa-hook"), ["ok"], { webhook: { url: receiver.url } }));
    const id = hooked.body.job_id;
    await expect.poll(async () => (await as(`/v1/jobs/${id}/webhook-deliveries`)).body.deliveries[0]?.status).toBe("delivered");
    expect((await as(`/v1/jobs/${id}/webhook-deliveries/redeliver`, "POST")).status).toBe(202);
    const plain = (await as("/v1/map?wait=true", "POST", scriptedMap(uniqueTag("oa-plain"), ["ok"]))).body.job_id;
    expect((await as(`/v1/jobs/${plain}/webhook-deliveries/redeliver`, "POST")).status).toBe(404);
  });

  it("every operation of the document was met with a success above", async () => {
    const check = await openApiCheck(base());
    const missing = check.operations.filter((o) => ![...(check.seen.get(o.id) ?? [])].some((s) => s >= 200 && s < 300)).map((o) => o.id);
    expect(missing).toEqual([]);
  });
});
