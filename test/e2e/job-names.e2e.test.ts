/**
 * A job's optional name (contract v4, "Estimates and names"): taken by every job-creating POST,
 * returned on the job and the job list; over 200 characters or holding a control character is a
 * 400 at `name`, nothing stored.
 */
import { describe, expect, it } from "vitest";
import { call, newTenant, waitForJob } from "./harness/api.ts";
import { base, scriptedMap, uniqueTag } from "./harness/context.ts";

describe("job names", () => {
  it("a named job shows its name on the job and in the list; an unnamed one shows null", async () => {
    const { key } = await newTenant(base());
    const named = await call(base(), "POST", "/v1/map", { token: key, body: { ...scriptedMap(uniqueTag("named"), ["ok"]), name: "Q3 support tickets" } });
    const plain = await call(base(), "POST", "/v1/reduce", {
      token: key,
      body: { inputs: ["a"], initial_value: {}, model: "openai/gpt-6-luna", reduction_task: { prompt_template: "{{ accumulator }} {{ current_result }}" } },
    });
    expect([named.status, plain.status]).toEqual([202, 202]);
    expect(await waitForJob(base(), key, named.body.job_id)).toMatchObject({ name: "Q3 support tickets", status: "completed" });
    expect((await waitForJob(base(), key, plain.body.job_id)).name).toBeNull();
    const list = (await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs;
    expect(list.map((j: { name: string | null }) => j.name).sort()).toEqual(["Q3 support tickets", null].sort());
  });

  it.each([
    ["over 200 characters", "x".repeat(201)],
    ["a control character", "line\nbreak"],
  ])("a name with %s is 400 at name, and nothing is stored", async (_what, name) => {
    const { key } = await newTenant(base());
    const res = await call(base(), "POST", "/v1/map", { token: key, body: { ...scriptedMap(uniqueTag("bad-name"), ["ok"]), name } });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe("name");
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });
});
