/**
 * Adaptive concurrency across a restart (SIGKILL, no chance to clean up, then the same local
 * state): what was learned about the provider's room is in storage, not only in memory. A job
 * killed under a limit goes on under it; the tenant's next job, after another restart, starts at
 * it (the ProviderLimiter reloads it). Without either, the first calls after the restart would
 * go out at the job's whole concurrency and the provider would throttle most of them again.
 */
import { afterAll, describe, expect, it } from "vitest";
import { allResults, call, newTenant, openEvents, readSse, waitForJob, type SseEvent } from "./harness/api.ts";
import { fakeStats, fakeUrl, uniqueTag } from "./harness/context.ts";
import { startFanout, type FanoutServer } from "./harness/fanout-server.ts";

const CONCURRENCY = 16; // not over 16: the first round is not paced, so it learns the provider's room at once
const ROOM = 4;
const N = 40;

let server: FanoutServer | undefined;
/** The running server's URL (a restart keeps its port). */
const url = () => (server as FanoutServer).url;
const vars = () => ({ OPENAI_BASE_URL: `${fakeUrl()}/v1`, OPENAI_API_KEY: "sk-env-openai-key" });

afterAll(async () => {
  await server?.stop();
});

const body = (tag: string) => ({
  inputs: Array.from({ length: N }, (_, i) => `item ${i} <<fake tag=${tag} id=${i} cap=${ROOM} ms=300>>`),
  prompt_template: "{{ item }}",
  model: "openai/gpt-4o-mini",
  concurrency: CONCURRENCY,
  max_retries: 10,
});

/** Kills the server and starts it on the same state; the time of the kill (the runtime sends calls before it answers its health check). */
async function restart(): Promise<number> {
  const { persistDir, port } = server as FanoutServer;
  await (server as FanoutServer).stop("SIGKILL");
  const killed = Date.now();
  server = await startFanout({ vars: vars(), persistDir, port });
  return killed;
}

/** The calls that reached the provider within 200 ms of the first one after `since` (each call takes 300 ms; a throttled one is retried after 1 s). */
async function firstBurstAfter(tag: string, since: number): Promise<number> {
  const after = (await fakeStats(tag)).times.filter((t) => t >= since);
  expect(after.length).toBeGreaterThan(0);
  return after.filter((t) => t < (after[0] as number) + 200).length;
}

/** A cut to at most half the job's concurrency (on a loaded machine the first round may reach the provider spread out, and fewer calls are throttled). */
const limited = (e: SseEvent) => e.event === "CONCURRENCY_CHANGED" && e.data.effective_concurrency <= CONCURRENCY / 2;

describe("adaptive concurrency across a restart", () => {
  it("a job killed under a learned limit goes on under it, and loses nothing", async () => {
    server = await startFanout({ vars: vars() });
    const { key } = await newTenant(server.url);
    const tag = uniqueTag("cap-restart");
    const created = await call(server.url, "POST", "/v1/map", { token: key, body: body(tag) });
    expect(created.status).toBe(202);
    const jobId = created.body.job_id;
    // The first round of 16 meets room for 4: the cut comes with its throttled answers, long before any call ends.
    const seen = await readSse(await openEvents(server.url, key, jobId), { stopWhen: limited });
    expect(seen.at(-1)).toMatchObject({ event: "CONCURRENCY_CHANGED", data: { reason: "throttled" } });
    const limit = seen.at(-1)?.data.effective_concurrency as number;

    const back = await restart();
    const done = await waitForJob(server.url, key, jobId, 90_000);
    expect(done).toMatchObject({ status: "completed", total: N, succeeded: N, failed: 0 });
    expect(done.effective_concurrency).toBeLessThan(CONCURRENCY);
    const results = await allResults(server.url, key, jobId);
    expect(results.map((r) => r.index)).toEqual(Array.from({ length: N }, (_, i) => i));
    // The calls under way at the kill run again, and the waiting retries go out, within the limit
    // (or a step or two above it, grown by successes before the kill): forgotten, the job would send 16 at once.
    expect(await firstBurstAfter(tag, back)).toBeLessThanOrEqual(limit + 2);
    const stats = await fakeStats(tag);
    expect(stats.requests - stats.throttled).toBeGreaterThanOrEqual(N);
  }, 150_000);

  it("the tenant's next job, after another restart, starts at the limit its limiter kept", async () => {
    const { key } = await newTenant(url());
    // Learn the room on a first job, then kill the server: the limiter's memory is gone, its storage is not.
    const first = await call(url(), "POST", "/v1/map", { token: key, body: body(uniqueTag("cap-learn")) });
    await waitForJob(url(), key, first.body.job_id, 90_000);
    const back = await restart();

    const tag = uniqueTag("cap-after");
    const created = await call(url(), "POST", "/v1/map", { token: key, body: body(tag) });
    const done = await waitForJob(url(), key, created.body.job_id, 90_000);
    expect(done).toMatchObject({ status: "completed", succeeded: N, failed: 0 });
    const changes = (await readSse(await openEvents(url(), key, created.body.job_id))).filter((e) => e.event === "CONCURRENCY_CHANGED");
    expect(changes[0]?.data).toMatchObject({ reason: "shared" });
    expect(changes[0]?.data.effective_concurrency).toBeLessThanOrEqual(ROOM + 4);
    expect(await firstBurstAfter(tag, back)).toBeLessThanOrEqual(ROOM + 4);
  }, 150_000);
});
