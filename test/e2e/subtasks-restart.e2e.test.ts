/**
 * Agent subtasks across a restart: the server is killed (SIGKILL) while a child sub-session's
 * model call is under way, and started again on the same local state. The parent waits without
 * holding anything, so both finish: the parent's spawning turn is not repeated, one child is
 * spawned, and the parent reads the child's answer.
 */
import { afterAll, describe, expect, it } from "vitest";
import { allResults, call, newTenant, waitForJob } from "./harness/api.ts";
import { fakeStats, fakeUrl, uniqueTag } from "./harness/context.ts";
import { startFanout, type FanoutServer } from "./harness/fanout-server.ts";

let server: FanoutServer | undefined;
afterAll(async () => {
  await server?.stop();
});

const spawn = (description: string) => `spawn:${encodeURIComponent(JSON.stringify({ description, inputs: {} }))}`;

describe("agent subtasks across a restart", () => {
  it("kill -9 while a child runs: both finish, nothing finished runs twice", async () => {
    const vars = { OPENAI_BASE_URL: `${fakeUrl()}/v1`, OPENAI_API_KEY: "sk-env-openai-key" };
    server = await startFanout({ vars });
    const { key } = await newTenant(server.url);
    const [tp, tc] = [uniqueTag("parent"), uniqueTag("child")];
    const child = `Child <<fake tag=${tc} id=c steps=text:child_answer ms=2000>>`;
    const body = {
      inputs: [`Root <<fake tag=${tp} id=p steps=${spawn(child)},text:root_done>>`],
      agent_prompt_template: "{{ item }}",
      model: "openai/gpt-4o-mini",
      subtasks: {},
      timeout_secs: 10,
    };
    const created = await call(server.url, "POST", "/v1/agentic-map", { token: key, body });
    const jobId = created.body.job_id;
    for (let i = 0; i < 200 && (await fakeStats(tc)).requests === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect((await fakeStats(tc)).in_flight).toBe(1); // the child's call is under way
    const { persistDir, port } = server;
    await server.stop("SIGKILL");
    server = await startFanout({ vars, persistDir, port });

    const job = await waitForJob(server.url, key, jobId, 90_000);
    expect(job).toMatchObject({ status: "completed", succeeded: 1 });
    const [result] = await allResults(server.url, key, jobId);
    expect(result).toMatchObject({ success: true, output_text: "root done", turns: 2 });
    const root = (await call(server.url, "GET", `/v1/sessions/${result.session_id}`, { token: key })).body;
    expect(root.children).toHaveLength(1);
    expect(root.messages.find((m: any) => m.role === "tool").content).toBe("child answer");
    expect((await fakeStats(tp)).requests).toBe(2); // the spawning turn and the last: none again
    expect((await fakeStats(tc)).requests).toBeLessThanOrEqual(2); // the interrupted call, at most once more
    const children = await allResults(server.url, key, jobId, "&stage=items.subtasks");
    expect(children).toHaveLength(1);
  });
});
