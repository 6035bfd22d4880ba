/** POST /v1/agentic-map end to end: the fake model scripts each turn; tools are real servers. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, waitForJob } from "./harness/api.ts";
import { ownKeyTenant } from "./harness/limited-key.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { startMcpServer, type McpTestServer } from "./harness/mcp-server.ts";
import { startEverythingServer, type EverythingServer } from "./harness/everything-server.ts";
import { startToolServer, type ToolServer } from "./harness/tool-server.ts";

let tools: ToolServer;
let mcp: McpTestServer;
let everything: EverythingServer;
beforeAll(async () => {
  tools = await startToolServer({ "/broken": [500, "database unavailable"] });
  mcp = await startMcpServer();
  everything = await startEverythingServer();
});
afterAll(async () => {
  await tools.close();
  await mcp.close();
  await everything.close();
});

const httpTool = (name: string, readOnly: boolean, path = `/${name}`) => ({
  type: "http",
  name,
  description: `the ${name} tool`,
  input_schema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  url: tools.url(path),
  read_only: readOnly,
});

async function runAgent(steps: string, overrides: Record<string, unknown> = {}) {
  // A throttle cuts the adaptive limit of the key it came on: scripted on a key of the tenant's own, not the deployment's.
  const { key } = await (/\b(429|529)\b/.test(steps) ? ownKeyTenant() : newTenant(base()));
  const tag = uniqueTag("agent");
  const body = {
    inputs: [{ task: "Investigate the item", d: fake(tag, 0, steps) }],
    agent_prompt_template: "{{ item.task }} {{ item.d }}",
    model: "openai/gpt-6-luna",
    ...overrides,
  };
  const created = await call(base(), "POST", "/v1/agentic-map", { token: key, body });
  expect(created.status).toBe(202);
  const job = await waitForJob(base(), key, created.body.job_id);
  const [result] = await allResults(base(), key, created.body.job_id);
  const session = await call(base(), "GET", `/v1/sessions/${result.session_id}`, { token: key });
  return { key, job, result, session: session.body, stats: await fakeStats(tag), jobId: created.body.job_id };
}

describe("POST /v1/agentic-map", () => {
  it("runs a single natural turn by default", async () => {
    const { job, result, session } = await runAgent("text:All_done_here");
    expect(job).toMatchObject({ type: "agentic_map", status: "completed", succeeded: 1 });
    expect(result).toMatchObject({
      index: 0,
      session_id: expect.stringMatching(/^ses_/),
      output_text: "All done here",
      success: true,
      error: null,
      error_kind: null,
      stop_reason: "natural",
      turns: 1,
      intermediate_outputs: ["All done here"],
    });
    expect(result.token_usage.total_tokens).toBe(result.token_usage.input_tokens + result.token_usage.output_tokens);
    expect(session.messages.map((m: any) => m.role)).toEqual(["user", "assistant"]);
    expect(session.messages[0].content).toContain("Investigate the item");
  });

  it("continues until the completion marker appears", async () => {
    const { result, session, stats } = await runAgent("text:working,text:still_working,text:finished_DONE", {
      continuation_message: "Keep going.",
      completion_marker: "DONE",
    });
    expect(result).toMatchObject({ stop_reason: "natural", turns: 3, output_text: "finished DONE" });
    expect(result.intermediate_outputs).toEqual(["working", "still working", "finished DONE"]);
    expect(
      session.messages
        .filter((m: any) => m.role === "user")
        .map((m: any) => m.content)
        .slice(1),
    ).toEqual(["Keep going.", "Keep going."]);
    expect(stats.requests).toBe(3);
  });

  it.each(["openai/gpt-6-luna", "anthropic/claude-sonnet-4-6"])("runs a tool loop over http tools with %s", async (model) => {
    const before = tools.calls.length;
    const { result, session, stats } = await runAgent("call:weather:paris,text:It_is_sunny", { model, tools: [httpTool("weather", true)] });
    expect(result).toMatchObject({ success: true, stop_reason: "natural", turns: 2, output_text: "It is sunny" });
    expect(tools.calls.slice(before)).toEqual([{ path: "/weather", args: { q: "paris" } }]);
    expect(stats.tools_offered[0]).toEqual(["weather"]);
    expect(stats.tool_results).toEqual(['result for {"q":"paris"}']);
    const [prompt, assistant, toolResult, final] = session.messages;
    expect(prompt.role).toBe("user");
    expect(assistant.tool_calls).toEqual([expect.objectContaining({ name: "weather", arguments: '{"q":"paris"}' })]);
    expect(toolResult).toMatchObject({ role: "tool", name: "weather", content: 'result for {"q":"paris"}', tool_call_id: assistant.tool_calls[0].id });
    expect(final).toMatchObject({ role: "assistant", content: "It is sunny" });
  });

  it("reports a failing http tool to the model as a tool error", async () => {
    const { result, session } = await runAgent("call:db,text:Could_not_check", { tools: [httpTool("db", true, "/broken")] });
    expect(result).toMatchObject({ success: true, turns: 2 });
    expect(session.messages[2]).toMatchObject({ role: "tool", is_error: true, content: "HTTP 500: database unavailable" });
  });

  it("calls an MCP tool and feeds its result back", async () => {
    const before = mcp.calls.length;
    const { result, stats } = await runAgent("call:lookup:cat,text:Looked_it_up", { tools: [{ type: "mcp", url: mcp.url }] });
    expect(result).toMatchObject({ success: true, turns: 2 });
    expect(mcp.calls.slice(before)).toEqual([{ name: "lookup", args: { q: "cat" } }]);
    expect(stats.tool_results).toEqual(["definition of cat"]);
    expect(stats.tools_offered[0].sort()).toEqual(["delete_record", "lookup"]);
  });

  it("offers only read-only tools with read_only: true and never runs the others", async () => {
    const mcpBefore = mcp.calls.length;
    const httpBefore = tools.calls.length;
    const { result, session, stats } = await runAgent("call:write_http:x,call:delete_record:y,call:lookup:z,text:done", {
      read_only: true,
      tools: [httpTool("read_http", true), httpTool("write_http", false), { type: "mcp", url: mcp.url }],
    });
    expect(result).toMatchObject({ success: true, turns: 4 });
    expect(stats.tools_offered[0].sort()).toEqual(["lookup", "read_http"]);
    expect(tools.calls.slice(httpBefore)).toEqual([]);
    expect(mcp.calls.slice(mcpBefore)).toEqual([{ name: "lookup", args: { q: "z" } }]);
    const refusals = session.messages.filter((m: any) => m.role === "tool" && m.is_error);
    expect(refusals.map((m: any) => m.name)).toEqual(["write_http", "delete_record"]);
    for (const r of refusals) expect(r.content).toContain("read-only");
  });

  it("limits MCP tools to allowed_tools", async () => {
    const { stats } = await runAgent("text:nothing_to_do", { tools: [{ type: "mcp", url: mcp.url, allowed_tools: ["lookup"] }] });
    expect(stats.tools_offered[0]).toEqual(["lookup"]);
  });

  it("stops a doom loop: the same call three times in a row", async () => {
    const { result } = await runAgent("call:read_http:same", { tools: [httpTool("read_http", true)] });
    expect(result).toMatchObject({ success: true, stop_reason: "doom_loop", turns: 3 });
  });

  it("stops at max_turns", async () => {
    const { result } = await runAgent("text:more", { continuation_message: "Go on.", max_turns: 3 });
    expect(result).toMatchObject({ stop_reason: "max_turns", turns: 3 });
  });

  it("stops at max_tokens when the output limit is hit", async () => {
    const { result } = await runAgent("length", { continuation_message: "Go on." });
    expect(result).toMatchObject({ stop_reason: "max_tokens", turns: 1 });
  });

  it("stops when the token budget is spent", async () => {
    const { result } = await runAgent("text:more", { continuation_message: "Go on.", max_turns: 50, max_total_tokens: 60 });
    expect(result.stop_reason).toBe("budget");
    expect(result.turns).toBeLessThan(50);
    expect(result.token_usage.total_tokens).toBeGreaterThanOrEqual(60);
  });

  it("retries a transient 429 inside turn 2 and carries on", async () => {
    const { result, stats } = await runAgent("call:read_http:a,429:1,text:recovered", { tools: [httpTool("read_http", true)] });
    expect(result).toMatchObject({ success: true, turns: 2, output_text: "recovered" });
    expect(stats.requests).toBe(3);
    expect(stats.times[2] - stats.times[1]).toBeGreaterThanOrEqual(900);
  });

  it("retries a 500 as a call task does, up to max_retries, then fails llm_error", async () => {
    const recovered = await runAgent("500,text:recovered", { max_retries: 1 });
    expect(recovered.result).toMatchObject({ success: true, output_text: "recovered" });
    expect(recovered.stats.requests).toBe(2);
    const spent = await runAgent("500,500,text:never", { max_retries: 1 });
    expect(spent.result).toMatchObject({ success: false, error_kind: "llm_error", stop_reason: "error" });
    expect(spent.stats.requests).toBe(2); // the first call and its one retry
  });

  it("fails with llm_error on a permanent provider error, never as a success", async () => {
    const { result, job } = await runAgent("text:first,401", { continuation_message: "Go on." });
    expect(result).toMatchObject({ success: false, error_kind: "llm_error", stop_reason: "error", turns: 1 });
    expect(result.error).toContain("401");
    expect(job).toMatchObject({ failed: 1, succeeded: 0 });
  });

  it("compacts older turns when the context grows past max_context_tokens, keeping the full history", async () => {
    const long = `text:${"lots_of_words_".repeat(40)}`;
    const { result, session, stats } = await runAgent(long, { continuation_message: "Continue.", max_turns: 8, max_context_tokens: 400 });
    expect(result).toMatchObject({ stop_reason: "max_turns", turns: 8 });
    expect(session.compactions).toBeGreaterThanOrEqual(1);
    expect(stats.summaries_seen).toBeGreaterThanOrEqual(1); // later turns saw the summary, not the folded turns
    expect(session.messages).toHaveLength(1 + 8 + 7); // prompt, 8 replies, 7 continuations: nothing dropped
    const lastPrompt = stats.prompts.at(-1) ?? "";
    expect(lastPrompt).toBe("Continue.");
  });

  it("keeps sessions to their tenant", async () => {
    const { result } = await runAgent("text:mine");
    const other = await newTenant(base());
    const res = await call(base(), "GET", `/v1/sessions/${result.session_id}`, { token: other.key });
    expect(res).toMatchObject({ status: 404, body: { error: { code: "not_found" } } });
  });

  it("emits MAP_STARTED with type agentic and returns AgentMapResults from batch", async () => {
    const { key, jobId } = await runAgent("text:ok");
    const events = await fetch(`${base()}/v1/jobs/${jobId}/events`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.text());
    expect(events).toContain('"type":"agentic"');
    const batch = await call(base(), "GET", `/v1/jobs/${jobId}/batch`, { token: key });
    expect(batch.body.successes[0]).toMatchObject({ session_id: expect.stringMatching(/^ses_/), stop_reason: "natural" });
  });
});

describe("cancelling an agentic job", () => {
  it("stops its sub-sessions after their current turn", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("agent-cancel");
    const body = {
      inputs: [0, 1].map((i) => ({ task: "Keep working", d: fake(tag, i, "text:working", 300) })),
      agent_prompt_template: "{{ item.task }} {{ item.d }}",
      model: "openai/gpt-6-luna",
      continuation_message: "Go on.",
      max_turns: 50,
      concurrency: 2,
    };
    const created = await call(base(), "POST", "/v1/agentic-map", { token: key, body });
    await new Promise((r) => setTimeout(r, 1_000));
    const cancelled = await call(base(), "POST", `/v1/jobs/${created.body.job_id}/cancel`, { token: key });
    expect(cancelled.body.status).toBe("cancelled");
    await new Promise((r) => setTimeout(r, 800)); // the turns under way finish
    const requestsAfterCancel = (await fakeStats(tag)).requests;
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await fakeStats(tag)).requests).toBe(requestsAfterCancel);
    expect(requestsAfterCancel).toBeLessThan(20);
  });
});

describe("a real MCP server nobody here wrote", () => {
  it("server-everything: its tools (some with an outputSchema) load in workerd, and a structured result reaches the model", async () => {
    const args = encodeURIComponent(JSON.stringify({ location: "Chicago" }));
    const { result, session } = await runAgent(`tool:get-structured-content:${args},text:It_drizzles`, { tools: [{ type: "mcp", url: everything.url }] });
    expect(result).toMatchObject({ success: true, error_kind: null, turns: 2, output_text: "It drizzles" });
    const toolMessage = session.messages.find((m: { role: string }) => m.role === "tool");
    expect(toolMessage.content).toContain("Light rain / drizzle"); // validated against the tool's outputSchema by the client
  });
});

describe("agentic failures of the set-up", () => {
  it("fails the item with tool_error, naming the server and the cause, when its MCP server cannot be reached", async () => {
    const { result, stats } = await runAgent("text:never", { tools: [{ type: "mcp", url: "http://127.0.0.1:1/mcp" }] });
    expect(result).toMatchObject({ success: false, error_kind: "tool_error", turns: 0 });
    expect(result.error).toMatch(/^Could not load the tools of the MCP server http:\/\/127\.0\.0\.1:1\/mcp: the connection failed/);
    expect(stats.requests).toBe(0); // no model was called
  });

  it("fails the item with tool_error naming the status when the server answers an error", async () => {
    const { result } = await runAgent("text:never", { tools: [{ type: "mcp", url: tools.url("/broken") }] });
    expect(result).toMatchObject({ success: false, error_kind: "tool_error", turns: 0 });
    expect(result.error).toMatch(/MCP server .*\/broken: it answered HTTP 500/);
  });
});
