/**
 * POST /v1/pipelines with `Content-Type: application/xml`: the reference spec's own example
 * documents run as written (their inputs given in the query string), a document with the
 * extensions (ids, batch, output schemas, attributes over query parameters) runs as its JSON
 * twin would, and malformed or wrongly shaped documents are refused.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { allResults, call, ECHO_SCHEMA, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/pipeline-xml/${name}`, import.meta.url), "utf8");
const MODEL = "openai/gpt-6-luna";

function postXml(key: string, xml: string, query = "") {
  return call(base(), "POST", `/v1/pipelines${query}`, { token: key, rawBody: xml, headers: { "content-type": "application/xml" } });
}

describe("POST /v1/pipelines (XML)", () => {
  it("runs the spec's sequential example as written: steps in order, inputs appended to each description", async () => {
    const { key } = await newTenant(base());
    const inputs = encodeURIComponent(JSON.stringify({ raw_data: "R1", default_config: { mode: "strict" } }));
    const created = await postXml(key, fixture("sequential.xml"), `?model=${MODEL}&inputs=${inputs}`);
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ type: "pipeline", status: "completed" });
    const steps = await allResults(base(), key, job.id, "&stage=steps");
    expect(steps.map((s) => s.step)).toEqual(["step_1", "step_2"]);
    // No output schema: the fake answers with its echo object as text. Context `none` (the root's): {{config_profile}} is empty.
    expect(JSON.parse(steps[0].output).echo).toBe("Load initial data\ndata: R1");
    expect(JSON.parse(steps[1].output).echo).toBe('Apply configuration from \nconfig: {"mode": "strict"}');
  });

  it("runs the spec's reduce example as written: the metadata input task once, then the fold over three named inputs", async () => {
    const { key } = await newTenant(base());
    const created = await postXml(key, fixture("reduce.xml"), `?model=${MODEL}`);
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", total_attempts: 7 });
    expect(job.stages.map((s: any) => [s.name, s.total])).toEqual([
      ["step_1.input.metadata", 1],
      ["step_1.inner", 3],
      ["step_1", 3],
      ["steps", 1],
    ]);
    const inner = await allResults(base(), key, job.id, "&stage=step_1.inner");
    expect(JSON.parse(inner[1].output).echo).toMatch(/^Processing for each input\ncurrent_data: Value 2\nmetadata: /);
    const folds = await allResults(base(), key, job.id, "&stage=step_1");
    expect(folds.map((f) => f.name)).toEqual(["dataset1", "dataset2", "dataset3"]);
    expect(JSON.parse(folds[2].output).echo).toMatch(/^Combine current result with accumulator\ncurrent_result: .*\naccumulator: .*\noriginal_input: Value 3$/);
  });

  it("takes ids, batch steps, output schemas and task attributes; the root's attributes win over the query", async () => {
    const { key } = await newTenant(base());
    const t = uniqueTag("xml");
    const schema = JSON.stringify(ECHO_SCHEMA).replaceAll("<", "&lt;");
    const xml = `<?xml version="1.0"?>
<task type="sequential" model="${MODEL}" concurrency="4">
  <inputs><input name="names">["ann", "bob"]</input><input name="greeting">Hi</input></inputs>
  <steps>
    <task id="hello">
      <description>{{ greeting }} &lt;&lt;fake tag=${t}&gt;&gt;</description>
      <batch items="\${names}" as="who" max_concurrent="1"/>
      <output_schema>${schema}</output_schema>
    </task>
    <task id="last">
      <description>&lt;&lt;fake tag=${t}&gt;&gt;</description>
      <inputs><input name="first" from="hello.results[0].echo"/></inputs>
      <output_schema>${schema}</output_schema>
    </task>
  </steps>
</task>`;
    const created = await postXml(key, xml, "?model=nonsense");
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", model: MODEL });
    expect(job.output.echo).toBe("first: Hi \nwho: ann"); // the first element's echo: "Hi " + its alias line
    expect((await fakeStats(t)).max_in_flight).toBe(1);
    const dry = await postXml(key, xml, "?dry_run=true");
    expect(dry.status).toBe(200);
    expect(dry.body.estimate.calls).toBe(3);
  });

  it("refuses malformed XML (invalid_xml), wrongly shaped tasks and unknown references (invalid_request), other media types (415)", async () => {
    const { key } = await newTenant(base());
    expect((await postXml(key, "<task><description>open</task>", `?model=${MODEL}`)).body.error.code).toBe("invalid_xml");
    expect((await postXml(key, '<!DOCTYPE t [<!ENTITY a "aaaa">]><task>&a;</task>', `?model=${MODEL}`)).body.error.code).toBe("invalid_xml");
    const unknown = await postXml(key, fixture("sequential.xml"), `?model=${MODEL}`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toContainEqual({
      path: "steps[0].inputs.data",
      message: 'unknown name "raw_data": neither a pipeline input nor an earlier step',
    });
    const noModel = await postXml(key, "<task><description>x</description></task>");
    expect(noModel.status).toBe(400);
    expect(noModel.body.error.details[0].path).toBe("model");
    const badAttr = await postXml(key, `<task model="${MODEL}" colour="red"><description>x</description></task>`);
    expect(badAttr.body.error.details).toEqual([{ path: "task@colour", message: "not a pipeline field" }]);
    const emptyInput = await postXml(key, `<task model="${MODEL}"><description>x</description><inputs><input name="a"/></inputs></task>`);
    expect(emptyInput.body.error.details).toEqual([{ path: "task/inputs/input[1]", message: 'an input needs from="…", a value or a <task>' }]);
    const text = await call(base(), "POST", "/v1/pipelines", { token: key, rawBody: "<task/>", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });
});
