/**
 * Models that retire (contract v4, "Providers as they fail": model lifecycle), over HTTP: a job on
 * a model past its shutdown is 400 `model_retired` with the replacement, and nothing is stored; a
 * job whose model (or its cascade's) shuts down within 30 days runs with a `model_retiring`
 * warning in its 202 answer and its view. The test deployment's MODEL_RETIREMENTS holds the two
 * test models (./global-setup.ts), so the calendar never changes what these tests see.
 */
import { describe, expect, it } from "vitest";
import { call, newTenant, waitForJob } from "./harness/api.ts";
import { base, scriptedMap, uniqueTag } from "./harness/context.ts";

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
});
