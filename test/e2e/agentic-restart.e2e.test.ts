/**
 * A sub-session is killed mid-run (SIGKILL on the whole server) and resumes from its stored
 * history after the restart: the prompt is not sent again as a new session, turns are not lost.
 */
import { afterAll, describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, waitForJob } from "./harness/api.ts";
import { fakeUrl, uniqueTag } from "./harness/context.ts";
import { startFanout, type FanoutServer } from "./harness/fanout-server.ts";

let server: FanoutServer | undefined;
afterAll(async () => {
  await server?.stop();
});

describe("an agentic session across a restart", () => {
  it("resumes from its stored history", async () => {
    const vars = { OPENAI_BASE_URL: `${fakeUrl()}/v1`, OPENAI_API_KEY: "sk-env-openai-key" };
    server = await startFanout({ vars });
    const { key } = await newTenant(server.url);
    const tag = uniqueTag("agent-restart");
    const body = {
      inputs: [{ d: fake(tag, 0, "text:step", 400) }],
      agent_prompt_template: "Work on it {{ item.d }}",
      model: "openai/gpt-4o-mini",
      continuation_message: "Next.",
      max_turns: 8,
    };
    const created = await call(server.url, "POST", "/v1/agentic-map", { token: key, body });
    const jobId = created.body.job_id;

    // Wait until the session has two turns stored (of eight, 400 ms each), then kill everything.
    let sessionId: string | undefined;
    for (let i = 0; i < 100 && !sessionId; i++) {
      await new Promise((r) => setTimeout(r, 100));
      sessionId = await sessionWithTurns(server.url, key, jobId, 2);
    }
    expect(sessionId).toBeDefined();
    expect((await call(server.url, "GET", `/v1/jobs/${jobId}`, { token: key })).body.status).toBe("running");
    const { persistDir, port } = server;
    await server.stop("SIGKILL");
    server = await startFanout({ vars, persistDir, port });

    const job = await waitForJob(server.url, key, jobId, 90_000);
    expect(job).toMatchObject({ status: "completed", succeeded: 1 });
    const [result] = await allResults(server.url, key, jobId);
    expect(result).toMatchObject({ session_id: sessionId, stop_reason: "max_turns", turns: 8 });
    const session = (await call(server.url, "GET", `/v1/sessions/${sessionId}`, { token: key })).body;
    expect(session.messages).toHaveLength(1 + 8 + 7);
    expect(session.messages.filter((m: any) => m.content.startsWith("Work on it"))).toHaveLength(1);
  });
});

/** The job's first session id once it has at least `turns` turns stored. */
async function sessionWithTurns(base: string, key: string, jobId: string, turns: number): Promise<string | undefined> {
  const res = await call(base, "GET", `/v1/jobs/${jobId}/sessions`, { token: key });
  const session = res.body?.sessions?.[0];
  return session && session.turns >= turns ? session.session_id : undefined;
}
