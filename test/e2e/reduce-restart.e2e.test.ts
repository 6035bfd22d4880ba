/**
 * The server is killed (SIGKILL) in the middle of a fold and started again on the same local
 * state: the final accumulator is the one a run without the restart gives, every reduction ran
 * in order, and each task has exactly one result.
 */
import { afterAll, describe, expect, it } from "vitest";
import { allResults, call, ECHO_SCHEMA, newTenant, openEvents, readSse, waitForJob } from "./harness/api.ts";
import { fakeUrl, uniqueTag } from "./harness/context.ts";
import { startFanout, type FanoutServer } from "./harness/fanout-server.ts";

const N = 24;
let server: FanoutServer | undefined;

afterAll(async () => {
  await server?.stop();
});

describe("a restart in the middle of a fold", () => {
  it("ends with the same accumulator as an uninterrupted run", async () => {
    const vars = { OPENAI_BASE_URL: `${fakeUrl()}/v1`, OPENAI_API_KEY: "sk-env-openai-key" };
    server = await startFanout({ vars });
    const { key } = await newTenant(server.url);
    const tag = uniqueTag("foldrestart");
    const body = {
      inputs: Array.from({ length: N }, (_, i) => `a${i}`),
      initial_value: "",
      inner_task: { prompt_template: `{{ item }} <<fake tag=${tag} id=i{{ index }} ms=60>>`, output_schema: ECHO_SCHEMA },
      reduction_task: {
        prompt_template: `{{ accumulator.echo if accumulator else '' }}+{{ current_result.echo }} <<fake tag=${tag} id=r{{ index }} ms=80>>`,
        output_schema: ECHO_SCHEMA,
      },
      model: "openai/gpt-4o-mini",
      concurrency: 4,
      timeout_secs: 2,
    };
    const created = await call(server.url, "POST", "/v1/reduce", { token: key, body });
    const jobId = created.body.job_id;
    const seen = await readSse(await openEvents(server.url, key, jobId), { stopAfter: 20 });
    expect(seen.some((e) => e.event === "TASK_COMPLETED" && e.data.stage === "reduction")).toBe(true);

    const { persistDir, port } = server;
    await server.stop("SIGKILL");
    server = await startFanout({ vars, persistDir, port });

    const job = await waitForJob(server.url, key, jobId, 120_000);
    const expected = Array.from({ length: N }, (_, i) => `+a${i}`).join("");
    expect(job).toMatchObject({ status: "completed", total: 2 * N, succeeded: 2 * N, failed: 0, output: { echo: expected } });
    const reductions = await allResults(server.url, key, jobId, "&stage=reduction");
    expect(reductions.map((r) => r.index)).toEqual(Array.from({ length: N }, (_, i) => i));
    expect(reductions.at(-1)?.accumulator.echo).toBe(expected);
    const events = await readSse(await openEvents(server.url, key, jobId));
    const done = events.filter((e) => e.event === "TASK_COMPLETED").map((e) => `${e.data.stage}:${e.data.index}`);
    expect(new Set(done).size).toBe(done.length);
    expect(done).toHaveLength(2 * N);
    const order = events.filter((e) => e.event === "TASK_COMPLETED" && e.data.stage === "reduction").map((e) => e.data.index);
    expect(order).toEqual(Array.from({ length: N }, (_, i) => i));
  });
});
