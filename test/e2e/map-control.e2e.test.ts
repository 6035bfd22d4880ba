import { describe, expect, it } from "vitest";
import { allResults, call, newTenant, openEvents, readSse, waitForJob } from "./harness/api.ts";
import { base, fakeStats, fakeUrl, scriptedMap, uniqueTag } from "./harness/context.ts";

describe("job control", () => {
  it("cancels mid-job: no new item starts, finished results stay, the stream ends with status cancelled", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("cancel");
    const body = scriptedMap(tag, Array(30).fill("ok"), { concurrency: 2 }, 300);
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    const jobId = created.body.job_id;
    const stream = openEvents(base(), key, jobId);
    await readSse(await openEvents(base(), key, jobId), { stopAfter: 3 }); // two items done
    const cancel = await call(base(), "POST", `/v1/jobs/${jobId}/cancel`, { token: key });
    expect(cancel.status).toBe(202);
    expect(cancel.body.status).toBe("cancelled");

    const events = await readSse(await stream);
    const last = events.at(-1);
    expect(last?.event).toBe("MAP_COMPLETED");
    expect(last?.data.status).toBe("cancelled");
    const job = await waitForJob(base(), key, jobId);
    expect(job.status).toBe("cancelled");
    expect(job.completed).toBeLessThan(30);
    const results = await allResults(base(), key, jobId);
    expect(results).toHaveLength(job.completed);
    expect(last?.data.completed).toBe(job.completed);

    const requestsAtCancel = (await fakeStats(tag)).requests;
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await fakeStats(tag)).requests).toBe(requestsAtCancel); // nothing new started
    expect((await call(base(), "GET", `/v1/jobs/${jobId}/batch`, { token: key })).status).toBe(200);
    // cancelling again is harmless
    expect((await call(base(), "POST", `/v1/jobs/${jobId}/cancel`, { token: key })).body.status).toBe("cancelled");
  });

  it("answers 409 for the batch of a running job", async () => {
    const { key } = await newTenant(base());
    const created = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("409"), ["slow:1500"]) });
    const batch = await call(base(), "GET", `/v1/jobs/${created.body.job_id}/batch`, { token: key });
    expect(batch).toMatchObject({ status: 409, body: { error: { code: "conflict" } } });
    await waitForJob(base(), key, created.body.job_id);
  });

  it("replays an Idempotency-Key with the same body and refuses it with another (422)", async () => {
    const { key } = await newTenant(base());
    const body = scriptedMap(uniqueTag("idem"), ["ok", "ok"]);
    const headers = { "idempotency-key": `order-${Date.now()}` };
    const first = await call(base(), "POST", "/v1/map", { token: key, body, headers });
    expect(first.status).toBe(202);
    const again = await call(base(), "POST", "/v1/map", { token: key, body, headers });
    expect(again.status).toBe(200);
    expect(again.body.job_id).toBe(first.body.job_id);
    const other = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, concurrency: 3 }, headers });
    expect(other).toMatchObject({ status: 422, body: { error: { code: "idempotency_mismatch" } } });
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toHaveLength(1);
    // the same key belongs to each tenant separately
    const b = await newTenant(base());
    const forB = await call(base(), "POST", "/v1/map", { token: b.key, body, headers });
    expect(forB.status).toBe(202);
    expect(forB.body.job_id).not.toBe(first.body.job_id);
  });

  it("shows tenant B nothing of tenant A's job: not the job, its results, batch or events", async () => {
    const a = await newTenant(base(), "a");
    const b = await newTenant(base(), "b");
    const created = await call(base(), "POST", "/v1/map", { token: a.key, body: scriptedMap(uniqueTag("iso"), ["ok"]) });
    await waitForJob(base(), a.key, created.body.job_id);
    for (const path of ["", "/results", "/batch", "/events"]) {
      const res = await call(base(), "GET", `/v1/jobs/${created.body.job_id}${path}`, { token: b.key });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await call(base(), "POST", `/v1/jobs/${created.body.job_id}/cancel`, { token: b.key })).status).toBe(404);
    expect((await call(base(), "GET", "/v1/jobs", { token: b.key })).body.jobs).toEqual([]);
    const events = await readSse(await openEvents(base(), a.key, created.body.job_id));
    expect(events.at(-1)?.event).toBe("MAP_COMPLETED");
  });

  it("uses the tenant's stored credential instead of the deployment's key", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("cred");
    const put = await call(base(), "PUT", "/v1/providers/openai", {
      token: key,
      body: { api_key: "sk-tenant-own-key-9876", base_url: `${fakeUrl()}/v1` },
    });
    expect(put.body.key_last4).toBe("9876");
    const created = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(tag, ["ok"]) });
    await waitForJob(base(), key, created.body.job_id);
    expect((await fakeStats(tag)).auth).toEqual(["Bearer sk-tenant-own-key-9876"]);

    // Another tenant without a credential falls back to the environment's key.
    const other = await newTenant(base());
    const tag2 = uniqueTag("envkey");
    const job2 = await call(base(), "POST", "/v1/map", { token: other.key, body: scriptedMap(tag2, ["ok"]) });
    await waitForJob(base(), other.key, job2.body.job_id);
    expect((await fakeStats(tag2)).auth).toEqual(["Bearer sk-env-openai-key"]);
  });

  it("accepts 10,000 items and refuses 10,001 with 413", async () => {
    const { key } = await newTenant(base());
    const inputs = Array.from({ length: 10_000 }, (_, i) => i);
    const over = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { inputs: [...inputs, 10_000], prompt_template: "n={{ item }}", model: "openai/x" },
    });
    expect(over.status).toBe(413);
    expect(over.body.error).toMatchObject({ code: "payload_too_large", details: [{ path: "inputs" }] });
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);

    const started = Date.now();
    const ok = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { inputs, prompt_template: `n={{ item }} <<fake tag=${uniqueTag("cap")} ms=50>>`, model: "openai/x", concurrency: 2 },
    });
    expect(ok.status).toBe(202);
    expect(ok.body.total).toBe(10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    await call(base(), "POST", `/v1/jobs/${ok.body.job_id}/cancel`, { token: key });
    expect((await waitForJob(base(), key, ok.body.job_id)).status).toBe("cancelled");
  });
});
