/**
 * The server is killed (SIGKILL, no chance to clean up) mid-job and started again on the same
 * local state: the job must finish with exactly one result per index — nothing lost, nothing twice;
 * and the calls that were under way run again right after the restart, not after their timeout.
 */
import { afterAll, describe, expect, it } from "vitest";
import { allResults, call, newTenant, openEvents, readSse, waitForJob } from "./harness/api.ts";
import { fakeStats, fakeUrl, scriptedMap, uniqueTag } from "./harness/context.ts";
import { startFanout, type FanoutServer } from "./harness/fanout-server.ts";

const N = 60;
let server: FanoutServer | undefined;

afterAll(async () => {
  await server?.stop();
});

describe("a restart mid-job", () => {
  it("loses nothing and duplicates nothing", async () => {
    const vars = { OPENAI_BASE_URL: `${fakeUrl()}/v1`, OPENAI_API_KEY: "sk-env-openai-key" };
    server = await startFanout({ vars });
    const { key } = await newTenant(server.url);
    const tag = uniqueTag("restart");
    // 429s on some items put retries in flight through the Queue when the server dies.
    const steps = Array.from({ length: N }, (_, i) => (i % 7 === 3 ? "429:1,ok" : "ok"));
    const body = scriptedMap(tag, steps, { concurrency: 4, timeout_secs: 2 }, 250);
    const created = await call(server.url, "POST", "/v1/map", { token: key, body });
    const jobId = created.body.job_id;
    await readSse(await openEvents(server.url, key, jobId), { stopAfter: 12 }); // ~11 items done

    const { persistDir, port } = server;
    await server.stop("SIGKILL");
    server = await startFanout({ vars, persistDir, port });

    const job = await waitForJob(server.url, key, jobId, 120_000);
    expect(job).toMatchObject({ status: "completed", total: N, completed: N, succeeded: N, failed: 0 });
    const results = await allResults(server.url, key, jobId);
    expect(results.map((r) => r.index)).toEqual(Array.from({ length: N }, (_, i) => i));
    const events = await readSse(await openEvents(server.url, key, jobId));
    const items = events.filter((e) => e.event === "MAP_ITEM_COMPLETED").map((e) => e.data.result.index);
    expect(items).toHaveLength(N);
    expect(new Set(items).size).toBe(N);
    expect(events.map((e) => e.id)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
    expect(events.at(-1)?.data).toMatchObject({ status: "completed", completed: N });
  });

  it("runs the calls under way at the kill again as soon as it is back, not after their timeout", async () => {
    const vars = { OPENAI_BASE_URL: `${fakeUrl()}/v1`, OPENAI_API_KEY: "sk-env-openai-key" };
    await server?.stop();
    server = await startFanout({ vars });
    const { key } = await newTenant(server.url);
    const tag = uniqueTag("restart-prompt");
    const n = 40;
    // A call's timeout of 120 s: a task left to the sweep would hold the job for two minutes.
    const body = scriptedMap(tag, Array.from({ length: n }, () => "ok"), { concurrency: 4, timeout_secs: 120 }, 250);
    const created = await call(server.url, "POST", "/v1/map", { token: key, body });
    const jobId = created.body.job_id;
    await readSse(await openEvents(server.url, key, jobId), { stopAfter: 12 });

    const { persistDir, port } = server;
    await server.stop("SIGKILL");
    server = await startFanout({ vars, persistDir, port });
    const back = Date.now();

    const job = await waitForJob(server.url, key, jobId, 100_000);
    expect(job).toMatchObject({ status: "completed", completed: n, succeeded: n });
    expect(Date.now() - back).toBeLessThan(30_000); // ~28 calls at 4 × 250 ms: seconds, not the timeout
    const results = await allResults(server.url, key, jobId);
    expect(results.map((r) => r.index)).toEqual(Array.from({ length: n }, (_, i) => i));
    // Only the calls under way at the kill (at most one per slot) were sent twice.
    const sent = (await fakeStats(tag)).requests;
    expect(sent).toBeGreaterThanOrEqual(n);
    expect(sent).toBeLessThanOrEqual(n + 4);
  }, 150_000);
});
