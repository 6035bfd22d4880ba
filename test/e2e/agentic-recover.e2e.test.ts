/**
 * Recover on an agentic job: the failed item runs again in a new sub-session (the old one keeps
 * its history), and the item that succeeded is not run again.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

describe("recover on an agentic-map job", () => {
  it("re-runs the failed item in a fresh sub-session and keeps the finished one", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("agent-recover");
    const body = {
      inputs: [{ d: fake(tag, 0, "text:fine") }, { d: fake(tag, 1, "401,text:now_fine") }],
      agent_prompt_template: "Work on {{ item.d }}",
      model: "openai/gpt-6-luna",
    };
    const created = await call(base(), "POST", "/v1/agentic-map", { token: key, body });
    const first = await waitForJob(base(), key, created.body.job_id);
    expect(first).toMatchObject({ succeeded: 1, failed: 1 });
    const [, failedBefore] = await allResults(base(), key, first.id);
    expect(failedBefore).toMatchObject({ success: false, error_kind: "llm_error" });

    const res = await call(base(), "POST", `/v1/jobs/${first.id}/recover`, { token: key });
    expect(res).toMatchObject({ status: 202, body: { recovering: 1 } });
    const second = await waitForJob(base(), key, first.id);
    expect(second).toMatchObject({ status: "completed", succeeded: 2, failed: 0 });
    const results = await allResults(base(), key, first.id);
    expect(results[1]).toMatchObject({ success: true, output_text: "now fine", stop_reason: "natural" });
    expect(results[1].session_id).not.toBe(failedBefore.session_id);
    const old = await call(base(), "GET", `/v1/sessions/${failedBefore.session_id}`, { token: key });
    expect(old.body).toMatchObject({ status: "failed" }); // the failed attempt's history is still there
    expect((await fakeStats(tag)).requests).toBe(3); // item 0 once; item 1 twice
  });
});
