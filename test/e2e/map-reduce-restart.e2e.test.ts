/**
 * The server is killed (SIGKILL) during a map-reduce job's reduce stage and started again on the
 * same local state: the job completes, and no reducer call that had finished runs again.
 */
import { afterAll, describe, expect, it } from "vitest";
import { call, ECHO_SCHEMA, newTenant, waitForJob } from "./harness/api.ts";
import { fakeStats, fakeUrl, uniqueTag } from "./harness/context.ts";
import { startFanout, type FanoutServer } from "./harness/fanout-server.ts";

const GROUPS = 12;
let server: FanoutServer | undefined;

afterAll(async () => {
  await server?.stop();
});

describe("a restart during the reduce stage", () => {
  it("completes without running a finished reducer call again", async () => {
    const vars = { OPENAI_BASE_URL: `${fakeUrl()}/v1`, OPENAI_API_KEY: "sk-env-openai-key" };
    server = await startFanout({ vars });
    const { key } = await newTenant(server.url);
    const [tm, tr] = [uniqueTag("mr-map"), uniqueTag("mr-red")];
    const inputs = Array.from({ length: GROUPS }, (_, g) => `doc <<fake tag=${tm} id=m${g} steps=json:${encodeURIComponent(JSON.stringify([{ category: `k${String(g).padStart(2, "0")}` }]))}>>`);
    const body = {
      inputs,
      model: "openai/gpt-4o-mini",
      mapper: { prompt_template: "{{ item }}" },
      docs_per_mapper: 1,
      max_parallel_mappers: 3,
      reducer: { prompt_template: `reduce {{ key }} {{ items | length }} <<fake tag=${tr} ms=400>>`, output_schema: ECHO_SCHEMA },
      reduction_strategy: "category",
      timeout_secs: 2,
    };
    const created = await call(server.url, "POST", "/v1/map-reduce", { token: key, body });
    expect([created.status, created.body.error]).toEqual([202, undefined]);
    const jobId = created.body.job_id;
    // Wait until two reducers have finished (their results are in D1), then kill the server.
    let finished: string[] = [];
    for (let i = 0; i < 200 && finished.length < 2; i++) {
      const page = await call(server.url, "GET", `/v1/jobs/${jobId}/results?stage=reduce`, { token: key });
      finished = (page.body.results ?? []).map((r: any) => r.key as string);
      if (finished.length < 2) await new Promise((r) => setTimeout(r, 50));
    }
    expect(finished.length).toBeGreaterThanOrEqual(2);
    expect(finished.length).toBeLessThan(GROUPS);

    const { persistDir, port } = server;
    await server.stop("SIGKILL");
    server = await startFanout({ vars, persistDir, port });

    const job = await waitForJob(server.url, key, jobId, 120_000);
    expect(job.status).toBe("completed");
    expect(job.output.map((r: any) => r.key)).toEqual(Array.from({ length: GROUPS }, (_, g) => `k${String(g).padStart(2, "0")}`));
    const prompts = (await fakeStats(tr)).prompts;
    for (const key of finished) expect(prompts.filter((p) => p.startsWith(`reduce ${key} `))).toHaveLength(1);
    expect((await fakeStats(tm)).requests).toBe(GROUPS); // no mapper ran twice either
  });
});
