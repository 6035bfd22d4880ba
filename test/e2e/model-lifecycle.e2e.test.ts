/**
 * Models that retire (contract v4, "Providers as they fail": model lifecycle), over HTTP: a job on
 * a model past its shutdown is 400 `model_retired` with the replacement, and nothing is stored; a
 * job whose model (or its cascade's) shuts down within 30 days runs with a `model_retiring`
 * warning in its 202 answer and its view. The test deployment's MODEL_RETIREMENTS holds the two
 * test models (./global-setup.ts), so the calendar never changes what these tests see. OpenAI's own
 * word — its `GET /v1/models` listing's `shutdown_date`, read at most daily per credential — dates
 * the models the shipped table does not, for that credential's tenant alone.
 */
import { describe, expect, it } from "vitest";
import { call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeUrl, scriptedMap, uniqueTag } from "./harness/context.ts";
import { ownKeyTenant } from "./harness/limited-key.ts";

const DAY_MS = 86_400_000;
const dateIn = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString().slice(0, 10);

async function scriptListing(key: string, data: { id: string; shutdown_date: string | null }[] | { status: number }): Promise<void> {
  const res = await fetch(`${fakeUrl()}/_fake/models`, { method: "POST", body: JSON.stringify(Array.isArray(data) ? { key, data } : { key, ...data }) });
  expect(res.status).toBe(204);
}

const listingReads = async (key: string): Promise<number> => ((await (await fetch(`${fakeUrl()}/_fake/models?key=${key}`)).json()) as { reads: number }).reads;

describe("model lifecycle", () => {
  it("refuses a job on a model past its shutdown with model_retired and the replacement, storing nothing", async () => {
    const { key } = await newTenant(base());
    const body = { ...scriptedMap(uniqueTag("retired"), ["ok"]), model: "openai/e2e-retired" };
    const res = await call(base(), "POST", "/v1/map", { token: key, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: "model_retired",
      details: { model: "openai/e2e-retired", shutdown_date: "2001-01-01", replacement: "openai/gpt-6-luna" },
    });
    expect(res.body.error.message).toContain("recommends openai/gpt-6-luna");
    // A dry run is refused the same way, and a cascade's model counts as the job's does.
    expect((await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body })).body.error.code).toBe("model_retired");
    const filter = {
      inputs: ["a"],
      predicate_template: "Keep? {{ item }}",
      model: "openai/gpt-6-luna",
      cascade: { model: "openai/e2e-retired", accept_above: 0.9, reject_below: 0.1 },
    };
    expect((await call(base(), "POST", "/v1/filter", { token: key, body: filter })).body.error.code).toBe("model_retired");
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });

  it("runs a job whose model retires within 30 days, warning in the 202 answer and the job view; a current model's job has no warning", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("retiring");
    const created = await call(base(), "POST", "/v1/map", { token: key, body: { ...scriptedMap(tag, ["ok"]), model: "openai/e2e-retiring" } });
    expect(created.status).toBe(202);
    const warning = { code: "model_retiring", model: "openai/e2e-retiring", shutdown_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), replacement: null };
    expect(created.body.warnings).toEqual([warning]);
    expect(await waitForJob(base(), key, created.body.job_id)).toMatchObject({ status: "completed", warnings: [warning] });
    // The cascade's model is one of the job's.
    const filter = {
      inputs: ["a"],
      predicate_template: `Keep? {{ item }} ${tag}`,
      model: "openai/gpt-6-luna",
      cascade: { model: "openai/e2e-retiring", accept_above: 0.9, reject_below: 0.1 },
    };
    const cascaded = await call(base(), "POST", "/v1/filter", { token: key, body: filter });
    expect(cascaded.body.warnings).toEqual([warning]);
    const current = await call(base(), "POST", "/v1/map", { token: key, body: scriptedMap(uniqueTag("current"), ["ok"]) });
    expect(current.body.warnings).toEqual([]);
    expect((await waitForJob(base(), key, current.body.job_id)).warnings).toEqual([]);
    await waitForJob(base(), key, cascaded.body.job_id);
  });

  it("takes the provider's word: a model OpenAI's listing dates past is refused, one it dates within 30 days warned of — for the tenant whose key it listed, read once a day", async () => {
    const listedTenant = await ownKeyTenant();
    const key = listedTenant.providerKeys.openai;
    // gpt-6-sol, which the shipped table does not date: gone yesterday for this key; gpt-6-luna: going in ten days.
    await scriptListing(key, [
      { id: "gpt-6-sol", shutdown_date: dateIn(-1) },
      { id: "gpt-6-luna", shutdown_date: dateIn(10) },
      { id: "gpt-5.6-terra", shutdown_date: null },
    ]);
    const refused = await call(base(), "POST", "/v1/map", {
      token: listedTenant.key,
      body: { ...scriptedMap(uniqueTag("listed"), ["ok"]), model: "openai/gpt-6-sol" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "model_retired", details: { model: "openai/gpt-6-sol", shutdown_date: dateIn(-1), replacement: null } });
    const warned = await call(base(), "POST", "/v1/map", { token: listedTenant.key, body: scriptedMap(uniqueTag("listed"), ["ok"]) });
    expect(warned.status).toBe(202);
    expect(warned.body.warnings).toEqual([{ code: "model_retiring", model: "openai/gpt-6-luna", shutdown_date: dateIn(10), replacement: null }]);
    expect(
      (await call(base(), "POST", "/v1/map", { token: listedTenant.key, body: { ...scriptedMap(uniqueTag("listed"), ["ok"]), model: "openai/gpt-5.6-terra" } }))
        .body.warnings,
    ).toEqual([]);
    expect(await listingReads(key)).toBe(1); // three submissions, one read: the listing is kept for a day
    await waitForJob(base(), listedTenant.key, warned.body.job_id);
    // Another tenant (the deployment's key, listed without dates) is not touched by that tenant's listing.
    const other = await newTenant(base());
    const plain = await call(base(), "POST", "/v1/map", { token: other.key, body: { ...scriptedMap(uniqueTag("listed"), ["ok"]), model: "openai/gpt-6-sol" } });
    expect(plain.status).toBe(202);
    expect(plain.body.warnings).toEqual([]);
    await waitForJob(base(), other.key, plain.body.job_id);
  });

  it("a listing that fails leaves the shipped table to speak: the job runs, and the listing is not asked again within the hour", async () => {
    const tenant = await ownKeyTenant();
    const key = tenant.providerKeys.openai;
    await scriptListing(key, { status: 500 });
    for (let i = 0; i < 2; i++) {
      const created = await call(base(), "POST", "/v1/map", {
        token: tenant.key,
        body: { ...scriptedMap(uniqueTag("unlisted"), ["ok"]), model: "openai/gpt-6-sol" },
      });
      expect(created.status).toBe(202);
      expect(created.body.warnings).toEqual([]);
      await waitForJob(base(), tenant.key, created.body.job_id);
    }
    expect(await listingReads(key)).toBe(1);
  });
});
