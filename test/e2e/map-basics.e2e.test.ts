import { describe, expect, it } from "vitest";
import { allResults, call, newTenant, openEvents, readSse, waitForJob } from "./harness/api.ts";
import { base, fakeStats, openGate, scriptedMap, uniqueTag } from "./harness/context.ts";

describe("POST /v1/map end to end", () => {
  it.each(["openai/gpt-6-luna", "anthropic/claude-sonnet-4-6", "openai-compatible/llama-3"])(
    "maps every item through %s and validates the output",
    async (model) => {
      const { key } = await newTenant(base());
      const tag = uniqueTag("happy");
      const created = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(tag, ["ok", "ok", "ok"], { model }) });
      expect(created.status).toBe(202);
      expect(created.body).toMatchObject({ job_id: expect.stringMatching(/^job_/), status: "queued", total: 3 });
      expect(created.body.links.events).toBe(`/v1/jobs/${created.body.job_id}/events`);

      const job = await waitForJob(base(), key, created.body.job_id);
      expect(job).toMatchObject({ type: "map", status: "completed", model, total: 3, completed: 3, succeeded: 3, failed: 0, total_attempts: 3 });
      expect(job.usage.input_tokens).toBeGreaterThan(0);
      const results = await allResults(base(), key, created.body.job_id);
      expect(results.map((r) => r.index)).toEqual([0, 1, 2]);
      for (const r of results) {
        expect(r).toMatchObject({ success: true, error: null, error_kind: null, attempts: 1 });
        expect(r.output).toEqual({ echo: `Summarize item ${r.index}`, length: `Summarize item ${r.index}`.length });
        expect(r.input).toEqual({ text: `item ${r.index}`, d: expect.any(String) });
        expect(r.usage.output_tokens).toBeGreaterThan(0);
      }
      expect((await fakeStats(tag)).requests).toBe(3);
    },
  );

  it("returns the text as output when there is no schema", async () => {
    const { key } = await newTenant(base());
    const body = scriptedMap(uniqueTag("text"), ["prose"], { output_schema: undefined });
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    await waitForJob(base(), key, created.body.job_id);
    const [result] = await allResults(base(), key, created.body.job_id);
    expect(result.output).toBe("I would rather describe this in words than in JSON.");
  });

  it("streams results in completion order, then MAP_COMPLETED, and closes", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("order");
    // item 0 answers slowest, item 2 fastest
    const body = scriptedMap(tag, ["slow:900", "slow:400", "ok"], { concurrency: 3 });
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    const events = await readSse(await openEvents(base(), key, created.body.job_id));
    expect(events.map((e) => e.event)).toEqual(["MAP_STARTED", "MAP_ITEM_COMPLETED", "MAP_ITEM_COMPLETED", "MAP_ITEM_COMPLETED", "MAP_COMPLETED"]);
    expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    expect(events[0].data).toEqual({ job_id: created.body.job_id, total: 3, model: "openai/gpt-6-luna" });
    expect(events.slice(1, 4).map((e) => e.data.result.index)).toEqual([2, 1, 0]);
    expect(events.slice(1, 4).map((e) => e.data.completed)).toEqual([1, 2, 3]);
    expect(events[4].data).toMatchObject({ status: "completed", total: 3, completed: 3, succeeded: 3, failed: 0, total_attempts: 3 });

    const byCompletion = await call(base(), "GET", `/v1/jobs/${created.body.job_id}/results?order=completion`, { token: key });
    expect(byCompletion.body.results.map((r: any) => r.index)).toEqual([2, 1, 0]);
  });

  it("replays every event to a late client, and only later ones after Last-Event-ID", async () => {
    const { key } = await newTenant(base());
    const created = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("replay"), ["ok", "ok", "ok", "ok"]) });
    await waitForJob(base(), key, created.body.job_id);
    const all = await readSse(await openEvents(base(), key, created.body.job_id));
    expect(all).toHaveLength(6);
    const after = await readSse(await openEvents(base(), key, created.body.job_id, 3));
    expect(after.map((e) => e.id)).toEqual([4, 5, 6]);
    expect(after).toEqual(all.slice(3));
  });

  it("resumes a live stream with Last-Event-ID without loss or repeats", async () => {
    const { key } = await newTenant(base());
    const body = scriptedMap(uniqueTag("resume"), Array(6).fill("slow:300"), { concurrency: 1 });
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    const first = await readSse(await openEvents(base(), key, created.body.job_id), { stopAfter: 3 });
    const rest = await readSse(await openEvents(base(), key, created.body.job_id, first.at(-1)?.id));
    const ids = [...first, ...rest].map((e) => e.id);
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("sends keepalive comments on an idle stream (SSE_KEEPALIVE_SECS=1 here)", async () => {
    const { key } = await newTenant(base());
    // The one call is held at the fake's gate until the stream has carried two keepalives (a slow
    // call raced the stream's opening on a loaded machine: one keepalive came before its end).
    const tag = uniqueTag("keepalive");
    const body = { ...scriptedMap(tag, ["ok"]), inputs: [{ text: "item 0", d: `<<fake tag=${tag} id=0 gate=0>>` }] };
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    const comments: string[] = [];
    const keepalives = () => comments.filter((c) => c === ": keepalive").length;
    const reading = readSse(await openEvents(base(), key, created.body.job_id), { comments });
    for (let i = 0; i < 200 && keepalives() < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(keepalives()).toBeGreaterThanOrEqual(2);
    await openGate(tag);
    const events = await reading;
    expect(events.at(-1)?.event).toBe("MAP_COMPLETED");
  });

  it("answers with the event stream itself when asked with Accept: text/event-stream", async () => {
    const { key } = await newTenant(base());
    const res = await fetch(`${base()}/v1/map`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(scriptedMap(uniqueTag("sse-post"), ["ok", "ok"])),
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = await readSse(res);
    expect(events.map((e) => e.event)).toEqual(["MAP_STARTED", "MAP_ITEM_COMPLETED", "MAP_ITEM_COMPLETED", "MAP_COMPLETED"]);
  });

  it("returns the batch with ?wait=true once the job ends", async () => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/map?wait=true", { token: key, body: scriptedMap(uniqueTag("wait"), ["ok", "401", "ok"]) });
    expect(res.status).toBe(200);
    expect(res.body.successes.map((r: any) => r.index)).toEqual([0, 2]);
    expect(res.body.failures.map((r: any) => r.index)).toEqual([1]);
    expect(res.body).toMatchObject({ total: 3, total_attempts: 3, job_id: expect.stringMatching(/^job_/) });
    const batch = await call(base(), "GET", `/v1/jobs/${res.body.job_id}/batch`, { token: key });
    expect(batch.body).toEqual(res.body);
  });

  it("pages results with a cursor and filters by status", async () => {
    const { key } = await newTenant(base());
    const steps = ["ok", "401", "ok", "401", "ok", "ok", "ok"];
    const created = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("pages"), steps) });
    await waitForJob(base(), key, created.body.job_id);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${cursor}` : "";
      const page = await call(base(), "GET", `/v1/jobs/${created.body.job_id}/results?limit=3${q}`, { token: key });
      expect(page.body.results.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.results.map((r: any) => r.index));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const failed = await allResults(base(), key, created.body.job_id, "&status=failed");
    expect(failed.map((r) => r.index)).toEqual([1, 3]);
    const completionPages = await allResults(base(), key, created.body.job_id, "&order=completion&status=succeeded");
    expect(completionPages.map((r) => r.index).sort()).toEqual([0, 2, 4, 5, 6]);
    const bad = await call(base(), "GET", `/v1/jobs/${created.body.job_id}/results?cursor=zzz`, { token: key });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: "invalid_request" } } });
  });

  it("lists jobs newest first with a cursor and a status filter", async () => {
    const { key } = await newTenant(base());
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("list"), ["ok"]) })).body.job_id);
    }
    for (const id of ids) await waitForJob(base(), key, id);
    const first = await call(base(), "GET", "/v1/jobs?limit=2", { token: key });
    expect(first.body.jobs.map((j: any) => j.id)).toEqual([ids[2], ids[1]]);
    const second = await call(base(), "GET", `/v1/jobs?limit=2&cursor=${first.body.next_cursor}`, { token: key });
    expect(second.body).toEqual({ jobs: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
    expect((await call(base(), "GET", "/v1/jobs?status=running", { token: key })).body.jobs).toEqual([]);
  });
});
