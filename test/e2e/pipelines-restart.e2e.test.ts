/**
 * The server is killed (SIGKILL) twice during a pipeline and started again on the same local
 * state: once in the middle of a batch step, once after that step finished while the next one
 * runs. The pipeline ends as an uninterrupted run would, no finished step runs again, and every
 * batch element has exactly one result.
 */
import { afterAll, describe, expect, it } from "vitest";
import { allResults, call, ECHO_SCHEMA, newTenant, openEvents, readSse, waitForJob } from "./harness/api.ts";
import { fakeStats, fakeUrl, uniqueTag } from "./harness/context.ts";
import { startFanout, type FanoutServer } from "./harness/fanout-server.ts";

const N = 30;
let server: FanoutServer | undefined;

afterAll(async () => {
  await server?.stop();
});

async function until(url: string, key: string, jobId: string, ok: (job: any) => boolean): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const job = (await call(url, "GET", `/v1/jobs/${jobId}`, { token: key })).body;
    if (ok(job)) return job;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the job never got there");
}

const stage = (job: any, name: string) => job.stages?.find((s: any) => s.name === name);

describe("a restart during a pipeline", () => {
  it("in the middle of a batch step and between two steps: the same output, nothing finished runs again", async () => {
    const vars = { OPENAI_BASE_URL: `${fakeUrl()}/v1`, OPENAI_API_KEY: "sk-env-openai-key" };
    server = await startFanout({ vars });
    const { key } = await newTenant(server.url);
    const [ta, tb, tc] = [uniqueTag("pa"), uniqueTag("pb"), uniqueTag("pc")];
    const body = {
      model: "openai/gpt-4o-mini",
      inputs: { list: Array.from({ length: N }, (_, i) => `e${i}`) },
      timeout_secs: 3,
      steps: [
        { id: "a", type: "llm", prompt_template: `start <<fake tag=${ta} ms=50>>`, output_schema: ECHO_SCHEMA },
        { id: "b", type: "llm", batch: { items: "${list}", max_concurrent: 4 }, prompt_template: `{{ item }} <<fake tag=${tb} id={{ item }} ms=80>>`, output_schema: ECHO_SCHEMA },
        { id: "c", type: "llm", prompt_template: `{{ b.results | map(attribute='echo') | join(',') }} <<fake tag=${tc} ms=1500>>`, output_schema: ECHO_SCHEMA },
      ],
    };
    const created = await call(server.url, "POST", "/v1/pipelines", { token: key, body });
    expect(created.status).toBe(202);
    const jobId = created.body.job_id;

    await until(server.url, key, jobId, (job) => (stage(job, "b")?.completed ?? 0) >= 10);
    let { persistDir, port } = server;
    await server.stop("SIGKILL");
    server = await startFanout({ vars, persistDir, port });

    await until(server.url, key, jobId, (job) => stage(job, "b")?.status === "completed" && (stage(job, "c")?.status === "running"));
    ({ persistDir, port } = server);
    await server.stop("SIGKILL");
    server = await startFanout({ vars, persistDir, port });

    const job = await waitForJob(server.url, key, jobId, 120_000);
    const expected = Array.from({ length: N }, (_, i) => `e${i}`).join(",");
    expect(job).toMatchObject({ status: "completed", output: { echo: expected } });
    expect((await fakeStats(ta)).requests).toBe(1); // the first step never ran again
    const elements = await allResults(server.url, key, jobId, "&stage=b");
    expect(elements.map((e) => [e.index, e.item])).toEqual(Array.from({ length: N }, (_, i) => [i, `e${i}`]));
    const events = await readSse(await openEvents(server.url, key, jobId));
    const done = events.filter((e) => e.event === "TASK_COMPLETED").map((e) => `${e.data.stage}:${e.data.index}`);
    expect(new Set(done).size).toBe(done.length);
    expect(done).toHaveLength(1 + N + 1 + 3); // a, b's elements, c, and the three step markers
  }, 300_000); // three server starts: 57 s alone, 106 s and over 120 s (the default) beside a second suite
});
