import { describe, expect, it } from "vitest";
import { countRows, request, tenantWithKey } from "./helpers";

const tool = { type: "http", name: "lookup", url: "https://tools.example.com/lookup" };
const valid = { inputs: ["a"], agent_prompt_template: "Research {{ item }}", model: "openai/x", tools: [tool] };

const cases: [string, Record<string, unknown>, string, string][] = [
  ["template without item", { agent_prompt_template: "Research something" }, "template_missing_item", "agent_prompt_template"],
  ["template syntax error", { agent_prompt_template: "{% if item %}" }, "template_syntax", "agent_prompt_template"],
  ["max_turns 0", { max_turns: 0 }, "invalid_request", "max_turns"],
  ["max_turns 101", { max_turns: 101 }, "invalid_request", "max_turns"],
  ["concurrency 33", { concurrency: 33 }, "invalid_request", "concurrency"],
  ["a tool without a name", { tools: [{ type: "http", url: "https://tools.example.com/x" }] }, "invalid_request", "tools[0].name"],
  ["a tool without a url", { tools: [{ type: "http", name: "x" }] }, "invalid_request", "tools[0].url"],
  ["an mcp server without a url", { tools: [{ type: "mcp" }] }, "invalid_request", "tools[0].url"],
  ["duplicate tool names", { tools: [tool, { ...tool, url: "https://other.example.com" }] }, "invalid_request", "tools[1].name"],
  ["an unknown tool type", { tools: [{ type: "python", name: "x" }] }, "invalid_request", "tools[0].type"],
  ["a tool name providers refuse", { tools: [{ ...tool, name: "has spaces" }] }, "invalid_request", "tools[0].name"],
  ["unknown provider", { model: "nope/x" }, "unknown_provider", "model"],
];

describe("POST /v1/agentic-map rejects bad input before anything is stored", () => {
  it.each(cases)("%s", async (_name, override, code, path) => {
    const { key } = await tenantWithKey();
    const before = await countRows("jobs");
    const res = await request("POST", "/v1/agentic-map", { token: key, body: { ...valid, ...override } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await countRows("jobs")).toBe(before);
  });

  it("404s another tenant's or an unknown session", async () => {
    const { key } = await tenantWithKey();
    expect((await request("GET", "/v1/sessions/ses_nope", { token: key })).status).toBe(404);
    expect((await request("GET", "/v1/jobs/job_nope/sessions", { token: key })).status).toBe(404);
  });
});
