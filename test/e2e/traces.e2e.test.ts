/**
 * Traces (contract v4, "Traces (OpenTelemetry)"), over HTTP: a tenant's collector (PUT
 * /v1/telemetry: the fake's OTLP/HTTP JSON endpoint) receives each job as one trace — the root
 * `invoke_workflow fanout.<type>` under the submitting request's `traceparent`, a span per stage,
 * a CLIENT span per model call with the GenAI conventions' attributes — and a collector that is
 * down never slows or fails a job; GET /v1/telemetry shows the last export, never a header's value.
 */
import { describe, expect, it } from "vitest";
import { call, fake, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeUrl, uniqueTag } from "./harness/context.ts";
import { lookupTool, startToolServer } from "./harness/tool-server.ts";

type Attr = { key: string; value: Record<string, unknown> };
type Span = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Attr[];
  status: { code: number };
  authorization: string | null;
};

const attr = (s: Span, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v ? (v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue ?? v.arrayValue))) : undefined;
};

async function spansOf(traceId: string, until: (spans: Span[]) => boolean): Promise<Span[]> {
  let spans: Span[] = [];
  await expect
    .poll(
      async () => {
        spans = (await (await fetch(`${fakeUrl()}/_fake/otlp/spans?trace=${traceId}`)).json()) as Span[];
        return until(spans);
      },
      { timeout: 20_000, interval: 100 },
    )
    .toBe(true);
  return spans;
}

const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join("");

describe("traces", () => {
  it("exports a job as one trace under the submitting request's: its root, its stage, a CLIENT span per model call with the GenAI attributes", async () => {
    const { key } = await newTenant(base());
    const put = await call(base(), "PUT", "/v1/telemetry", {
      token: key,
      body: { otlp_endpoint: `${fakeUrl()}/_fake/otlp/v1/traces`, headers: { authorization: "Bearer collector-secret" } },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toEqual({
      otlp_endpoint: `${fakeUrl()}/_fake/otlp/v1/traces`,
      header_names: ["authorization"],
      capture_content: false,
      last_export: null,
    });
    const [traceId, parent] = [hex(32), hex(16)];
    const tag = uniqueTag("trace");
    const body = {
      inputs: [0, 1, 2].map((i) => ({ d: fake(tag, i, i === 2 ? "500,ok" : "ok") })),
      prompt_template: "Summarize {{ item.d }}",
      model: "openai/gpt-6-luna",
      max_tokens: 50,
    };
    const created = await call(base(), "POST", "/v1/map", { token: key, body, headers: { traceparent: `00-${traceId}-${parent}-01` } });
    expect(created.status).toBe(202);
    await waitForJob(base(), key, created.body.job_id);
    const spans = await spansOf(traceId, (all) => all.some((s) => s.name === "invoke_workflow fanout.map"));
    const root = spans.find((s) => s.name === "invoke_workflow fanout.map") as Span;
    expect(root).toMatchObject({ parentSpanId: parent, kind: 1, status: { code: 1 }, authorization: "Bearer collector-secret" });
    expect(attr(root, "gen_ai.operation.name")).toBe("invoke_workflow");
    expect(attr(root, "fanout.job.id")).toBe(created.body.job_id);
    const stage = spans.find((s) => s.name === "stage items") as Span;
    expect(stage.parentSpanId).toBe(root.spanId);
    const calls = spans.filter((s) => s.name === "chat gpt-6-luna");
    expect(calls).toHaveLength(4); // three items, one retried after its 500
    for (const c of calls) {
      expect(c).toMatchObject({ kind: 3, parentSpanId: stage.spanId });
      expect(attr(c, "gen_ai.operation.name")).toBe("chat");
      expect(attr(c, "gen_ai.provider.name")).toBe("openai");
      expect(attr(c, "gen_ai.request.model")).toBe("gpt-6-luna");
      expect(attr(c, "gen_ai.request.max_tokens")).toBe(50);
      expect(attr(c, "server.address")).toBe("127.0.0.1"); // the deployment's OPENAI_BASE_URL: the fake
      expect(attr(c, "fanout.task.index")).toEqual(expect.any(Number));
    }
    const ok = calls.filter((c) => c.status.code === 1);
    expect(ok).toHaveLength(3);
    for (const c of ok) {
      expect(attr(c, "gen_ai.usage.input_tokens")).toBeGreaterThan(0);
      expect(attr(c, "gen_ai.response.model")).toBe("gpt-6-luna");
      expect(String(attr(c, "gen_ai.response.id"))).toMatch(/^chatcmpl-/);
      expect(attr(c, "gen_ai.response.finish_reasons")).toEqual({ values: [{ stringValue: "stop" }] });
      expect(attr(c, "gen_ai.output.messages")).toBeUndefined(); // capture_content is off
    }
    const failed = calls.find((c) => c.status.code === 2) as Span;
    expect(attr(failed, "error.type")).toBe("transient");
    const shown = await call(base(), "GET", "/v1/telemetry", { token: key });
    expect(shown.body.last_export).toMatchObject({ status: 200, error: null });
    expect(JSON.stringify(shown.body)).not.toContain("collector-secret");
  });

  it("an agent's sub-session is an invoke_agent span with a chat span per turn and an execute_tool span per tool call", async () => {
    const tools = await startToolServer();
    try {
      const { key } = await newTenant(base());
      await call(base(), "PUT", "/v1/telemetry", { token: key, body: { otlp_endpoint: `${fakeUrl()}/_fake/otlp/v1/traces` } });
      const traceId = hex(32);
      const tag = uniqueTag("trace-agent");
      const lookup = lookupTool(tools);
      const body = {
        inputs: [{ d: fake(tag, 0, "call:lookup:tides,text:All_done_here") }],
        agent_prompt_template: "Investigate {{ item.d }}",
        model: "openai/gpt-6-luna",
        tools: [lookup],
        max_turns: 4,
      };
      const created = await call(base(), "POST", "/v1/agentic-map", { token: key, body, headers: { traceparent: `00-${traceId}-${hex(16)}-01` } });
      expect(created.status).toBe(202);
      await waitForJob(base(), key, created.body.job_id);
      const spans = await spansOf(traceId, (all) => all.some((s) => s.name.startsWith("invoke_workflow")));
      const agent = spans.find((s) => s.name === "invoke_agent gpt-6-luna") as Span;
      expect(agent).toBeDefined();
      const under = spans.filter((s) => s.parentSpanId === agent.spanId).map((s) => s.name);
      expect(under).toEqual(["chat gpt-6-luna", "execute_tool lookup", "chat gpt-6-luna"]);
      const tool = spans.find((s) => s.name === "execute_tool lookup") as Span;
      expect(attr(tool, "gen_ai.tool.name")).toBe("lookup");
    } finally {
      await tools.close();
    }
  });

  it("a collector that is down never slows or fails a job; the last export says why", async () => {
    const { key } = await newTenant(base());
    await call(base(), "PUT", "/v1/telemetry", { token: key, body: { otlp_endpoint: `${fakeUrl()}/_fake/otlp-down/v1/traces` } });
    const tag = uniqueTag("trace-down");
    const body = { inputs: [0, 1, 2, 3].map((i) => ({ d: fake(tag, i, "ok") })), prompt_template: "Summarize {{ item.d }}", model: "openai/gpt-6-luna" };
    const job = await waitForJob(base(), key, (await call(base(), "POST", "/v1/map", { token: key, body })).body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 4 });
    await expect
      .poll(async () => (await call(base(), "GET", "/v1/telemetry", { token: key })).body.last_export?.status, { timeout: 20_000, interval: 100 })
      .toBe(500);
    expect((await call(base(), "GET", "/v1/telemetry", { token: key })).body.last_export.error).toMatch(/500/);
  });

  it("a collector that never answers holds no job: the job has ended while its export still waits", async () => {
    const { key } = await newTenant(base());
    await call(base(), "PUT", "/v1/telemetry", { token: key, body: { otlp_endpoint: `${fakeUrl()}/_fake/otlp-hang/v1/traces` } });
    const hanging = async () => ((await (await fetch(`${fakeUrl()}/_fake/otlp/hanging`)).json()) as { hanging: number }).hanging;
    const before = await hanging();
    const tag = uniqueTag("trace-hang");
    // 300 calls: an export goes out mid-run (256 spans) and hangs; the rest wait in memory, bounded, and the job goes on.
    const body = {
      inputs: Array.from({ length: 300 }, (_, i) => ({ d: fake(tag, i, "ok") })),
      prompt_template: "Summarize {{ item.d }}",
      model: "openai/gpt-6-luna",
      concurrency: 50,
    };
    const job = await waitForJob(base(), key, (await call(base(), "POST", "/v1/map", { token: key, body })).body.job_id);
    expect(job).toMatchObject({ status: "completed", succeeded: 300 });
    await expect.poll(hanging, { timeout: 20_000, interval: 100 }).toBeGreaterThan(before); // its export went out, and waits
  });

  it("refuses a collector that is not an allowed destination or whose header names are not HTTP tokens, storing nothing; DELETE stops the traces", async () => {
    const { key } = await newTenant(base());
    const bad = await call(base(), "PUT", "/v1/telemetry", { token: key, body: { otlp_endpoint: "ftp://collector.example/v1/traces" } });
    expect(bad.status).toBe(400);
    const names = await call(base(), "PUT", "/v1/telemetry", {
      token: key,
      body: { otlp_endpoint: `${fakeUrl()}/_fake/otlp/v1/traces`, headers: { "bad name": "x" } },
    });
    expect(names.status).toBe(400);
    expect((await call(base(), "GET", "/v1/telemetry", { token: key })).status).toBe(404);
    await call(base(), "PUT", "/v1/telemetry", { token: key, body: { otlp_endpoint: `${fakeUrl()}/_fake/otlp/v1/traces` } });
    expect((await call(base(), "DELETE", "/v1/telemetry", { token: key })).status).toBe(204);
    expect((await call(base(), "GET", "/v1/telemetry", { token: key })).status).toBe(404);
  });
});
