/**
 * Agent subtasks (v2 contract, "Agent subtasks") end to end: the fake model scripts each
 * session's turns — a `spawn:` step is a spawn_subtask call whose description carries the
 * child's own script. A chain of 3, the depth refusal at 6, a cycle, the chain's token cap and
 * time limit, concurrency 1 without a deadlock, read_only in children, a pipeline agent step.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allResults, call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { Fanout } from "../../client/src/index.ts";
import { startToolServer, type ToolServer } from "./harness/tool-server.ts";

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer();
});
afterAll(async () => {
  await tools.close();
});

const MODEL = "openai/gpt-6-luna";
/** A spawn_subtask call (a fake step) asking for `description` with `inputs`. */
export const spawn = (description: string, inputs: Record<string, unknown> = {}) => `spawn:${encodeURIComponent(JSON.stringify({ description, inputs }))}`;
const directive = (tag: string, id: string, steps: string[], ms?: number) => `<<fake tag=${tag} id=${id} steps=${steps.join(",")}${ms ? ` ms=${ms}` : ""}>>`;

async function session(key: string, id: string) {
  const res = await call(base(), "GET", `/v1/sessions/${id}`, { token: key });
  expect(res.status).toBe(200);
  return res.body;
}

async function agentJob(key: string, prompt: string | string[], overrides: Record<string, unknown> = {}) {
  const created = await call(base(), "POST", "/v1/agentic-map", {
    token: key,
    body: {
      inputs: typeof prompt === "string" ? [prompt] : prompt,
      agent_prompt_template: "{{ item }}",
      model: MODEL,
      max_turns: 6,
      subtasks: { enabled: true },
      ...overrides,
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  const job = await waitForJob(base(), key, created.body.job_id);
  return { job, results: await allResults(base(), key, job.id) };
}

describe("agent subtasks", () => {
  it("a chain of 3: each child answers its parent through the tool; the session tree and the chain's tokens are on the item", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("chain");
    const c2 = `Level two ${directive(t, "c2", ["text:leaf_answer"])}`;
    const c1 = `Level one ${directive(t, "c1", [spawn(c2, { n: 2 }), "text:c1_done"])}`;
    const { job, results } = await agentJob(key, `Root task ${directive(t, "root", [spawn(c1, { n: 1 }), "text:root_done"])}`);
    expect(job).toMatchObject({ status: "completed", total: 1, completed: 1, succeeded: 1 });
    const [item] = results;
    expect(item).toMatchObject({ success: true, output_text: "root done", turns: 2 });
    const root = await session(key, item.session_id);
    expect(root).toMatchObject({ depth: 0, parent_session_id: null });
    expect(root.children).toHaveLength(1);
    expect(root.messages.find((m: any) => m.role === "tool")).toMatchObject({ name: "spawn_subtask", content: "c1 done" });
    const one = await session(key, root.children[0]);
    expect(one).toMatchObject({ depth: 1, parent_session_id: item.session_id, status: "completed" });
    expect(one.messages[0].content).toBe(`${c1}\n\nInputs:\n{\n  "n": 1\n}`);
    const two = await session(key, one.children[0]);
    expect(two).toMatchObject({ depth: 2, children: [], status: "completed" });
    expect(one.messages.find((m: any) => m.role === "tool").content).toBe("leaf answer");
    // The item's usage is the chain's; the job's tokens count each call once.
    const own = root.token_usage.total_tokens;
    expect(item.token_usage.total_tokens).toBe(own + one.token_usage.total_tokens + two.token_usage.total_tokens);
    expect(job.usage.input_tokens + job.usage.output_tokens).toBe(item.token_usage.total_tokens);
    const children = await allResults(base(), key, job.id, "&stage=items.subtasks");
    expect(children.map((c) => [c.depth, c.success])).toEqual([
      [1, true],
      [2, true],
    ]);
  });

  it("refuses a sixth level as a tool error the model reads; the fifth answers", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("depth");
    let prompt = `Level 6 ${directive(t, "l6", ["text:never"])}`;
    for (let level = 5; level >= 1; level--) prompt = `Level ${level} ${directive(t, `l${level}`, [spawn(prompt), `text:level_${level}_done`])}`;
    const { results } = await agentJob(key, `Root ${directive(t, "root", [spawn(prompt), "text:root_done"])}`);
    expect(results[0]).toMatchObject({ success: true, output_text: "root done" });
    let current = await session(key, results[0].session_id);
    for (let level = 1; level <= 5; level++) current = await session(key, current.children[0]);
    expect(current).toMatchObject({ depth: 5, children: [] });
    const refusal = current.messages.find((m: any) => m.role === "tool");
    expect(refusal).toMatchObject({ name: "spawn_subtask", is_error: true });
    expect(refusal.content).toContain("subtasks nest at most 5 levels deep, and this one would be level 6");
    expect((await fakeStats(t)).prompts.some((p: string) => p.startsWith("Level 6"))).toBe(false);
  });

  it("refuses a cycle: a child asking for the same description and inputs as its own spawn", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("cycle");
    // The child's script asks for its own request again (`respawn`): identical description and inputs.
    const childArgs = { description: `Loop ${directive(t, "c1", ["respawn", "text:gave_up"])}`, inputs: { same: true } };
    const { results } = await agentJob(key, `Root ${directive(t, "root", [`spawn:${encodeURIComponent(JSON.stringify(childArgs))}`, "text:root_done"])}`);
    expect(results[0]).toMatchObject({ success: true, output_text: "root done" });
    const root = await session(key, results[0].session_id);
    const one = await session(key, root.children[0]);
    expect(one.children).toEqual([]);
    const refusal = one.messages.find((m: any) => m.role === "tool");
    expect(refusal).toMatchObject({ is_error: true });
    expect(refusal.content).toContain("a cycle");
    expect(root.messages.find((m: any) => m.role === "tool").content).toBe("gave up");
  });

  it("refuses a spawn past the chain's token cap, and bad arguments, as tool errors", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("cap");
    const { results } = await agentJob(key, `Root ${directive(t, "root", [spawn("child"), "call:spawn_subtask:not_json", "text:root_done"])}`, {
      subtasks: { max_total_tokens: 5 },
    });
    expect(results[0]).toMatchObject({ success: true, output_text: "root done" });
    const root = await session(key, results[0].session_id);
    expect(root.children).toEqual([]);
    const errors = root.messages.filter((m: any) => m.role === "tool").map((m: any) => [m.is_error, m.content]);
    expect(errors[0][0]).toBe(true);
    expect(errors[0][1]).toMatch(/^spawn_subtask refused: the subtask chain has used \d+ tokens of its 5\./);
    expect(errors[1]).toEqual([true, "spawn_subtask: description must be a non-empty string"]);
  });

  it("bounds the whole chain's time: a child past it ends, and its parent reads the failure", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("time");
    const child = `Slow ${directive(t, "c1", [spawn("grandchild"), "text:never"], 1_500)}`;
    const { results } = await agentJob(key, `Root ${directive(t, "root", [spawn(child), "text:root_done"])}`, { subtasks: { timeout_secs: 1 } });
    expect(results[0]).toMatchObject({ success: true, output_text: "root done" });
    const root = await session(key, results[0].session_id);
    const answer = root.messages.find((m: any) => m.role === "tool");
    expect(answer).toMatchObject({ is_error: true });
    expect(answer.content).toContain("the subtask chain's time limit (1 s) passed");
    const one = await session(key, root.children[0]);
    expect(one).toMatchObject({ status: "failed", children: [] });
    expect(one.messages.find((m: any) => m.role === "tool").content).toContain("time limit (1 s) has passed");
  });

  it("cannot deadlock: concurrency 1, every item's agent waiting on a child", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("deadlock");
    const item = (i: number) =>
      `Item ${i} ${directive(t, `p${i}`, [spawn(`Child ${i} ${directive(t, `c${i}`, [`text:child_${i}`])}`), `text:item_${i}_done`])}`;
    const { job, results } = await agentJob(key, [item(0), item(1)], { concurrency: 1 });
    expect(job).toMatchObject({ status: "completed", total: 2, succeeded: 2 });
    expect(results.map((r) => r.output_text)).toEqual(["item 0 done", "item 1 done"]);
    expect((await fakeStats(t)).max_in_flight).toBe(1);
  });

  it("children run with the parent's tools and read_only: the write tool is offered to neither", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("ro");
    const tool = (name: string, readOnly: boolean) => ({
      type: "http",
      name,
      description: name,
      input_schema: { type: "object" },
      url: tools.url(`/${name}`),
      read_only: readOnly,
    });
    const before = tools.calls.length;
    const child = `Child ${directive(t, "c1", ["call:write:x", "call:read:y", "text:child_done"])}`;
    const { results } = await agentJob(key, `Root ${directive(t, "root", [spawn(child), "text:root_done"])}`, {
      read_only: true,
      tools: [tool("read", true), tool("write", false)],
    });
    expect(results[0]).toMatchObject({ success: true, output_text: "root done" });
    const offered = (await fakeStats(t)).tools_offered;
    for (const names of offered) expect(names.sort()).toEqual(["read", "spawn_subtask"]);
    expect(tools.calls.slice(before).map((c) => c.path)).toEqual(["/read"]);
    const root = await session(key, results[0].session_id);
    const child1 = await session(key, root.children[0]);
    expect(child1.messages.find((m: any) => m.role === "tool" && m.name === "write")).toMatchObject({ is_error: true });
  });

  it("works in a pipeline's agent step, whose children run in <path>.subtasks; the Anthropic format offers the tool too", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("pipesub");
    const created = await call(base(), "POST", "/v1/pipelines", {
      token: key,
      body: {
        model: MODEL,
        steps: [
          {
            id: "research",
            type: "agent",
            subtasks: { max_depth: 1 },
            max_turns: 4,
            prompt_template: `Root ${directive(t, "root", [spawn(`Child ${directive(t, "c1", ["text:found"])}`), "text:root_done"])}`,
          },
        ],
      },
    });
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", output: "root done" });
    expect(job.stages.map((s: any) => s.name)).toEqual(["research", "steps", "research.subtasks"]);
    const ta = uniqueTag("anth");
    const anthropic = await call(base(), "POST", "/v1/agentic-map", {
      token: key,
      body: { inputs: [`Hi ${directive(ta, "a", ["text:hello"])}`], agent_prompt_template: "{{ item }}", model: "anthropic/claude-haiku-4-5", subtasks: {} },
    });
    await waitForJob(base(), key, anthropic.body.job_id);
    expect((await fakeStats(ta)).tools_offered[0]).toEqual(["spawn_subtask"]);
    const bad = await call(base(), "POST", "/v1/agentic-map", {
      token: key,
      body: { inputs: ["x"], agent_prompt_template: "{{ item }}", model: MODEL, subtasks: { max_depth: 6 } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("subtasks.max_depth");
  });

  it("the client's agenticMap takes subtasks (camelCase) and the item delegates", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("client");
    const fanout = new Fanout({ apiKey: key, baseUrl: base() });
    const batch = await fanout
      .agenticMap({
        inputs: [`Root ${directive(t, "root", [spawn(`Child ${directive(t, "c", ["text:delegated"])}`), "text:root_done"])}`],
        agentPromptTemplate: "{{ item }}",
        model: MODEL,
        subtasks: { maxDepth: 1, timeoutSecs: 60 },
      })
      .runAll();
    expect(batch.successes.map((r) => r.output_text)).toEqual(["root done"]);
    expect((await session(key, batch.successes[0]!.session_id)).children).toHaveLength(1);
  });
});
