/**
 * POST /v1/resolve over HTTP against the fake model: only the pairs inside a block are compared
 * (the comparison template scripts the fake's answer from the records: the same `g`, a match),
 * matches are closed transitively, each cluster of two or more gets one resolution call, every
 * input lands in exactly one cluster; a blocking over max_comparisons is 422 before anything runs.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, ECHO_SCHEMA, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const MODEL = "openai/gpt-6-luna";
const json = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;
const COMPANIES = [
  { i: 0, g: 1, name: "Acme Inc" },
  { i: 1, g: 1, name: "ACME Incorporated" },
  { i: 2, g: 1, name: "Acme Inc." },
  { i: 3, g: 2, name: "Globex Corp" },
  { i: 4, g: 2, name: "Globex Corporation" },
  { i: 5, g: 3, name: "Initech" },
  { i: 6, g: 4, name: "Acme Travel" },
];

const resolveBody = (tag: string, extra: Record<string, unknown> = {}) => ({
  inputs: COMPANIES,
  comparison_template:
    `Same company? {{ item_a.name }} / {{ item_b.name }} ` +
    `<<fake tag=${tag} id={{ item_a.i }}-{{ item_b.i }} steps={{ '${json({ match: true })}' if item_a.g == item_b.g else '${json({ match: false })}' }}>>`,
  blocking: { keys: ["name"], method: "prefix", threshold: 4 },
  model: MODEL,
  concurrency: 4,
  ...extra,
});

describe("POST /v1/resolve", () => {
  it("compares the pairs of each block, closes the matches, resolves each cluster of two or more once", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("resolve");
    const body = resolveBody(tag, {
      resolution_template: `Merge: {{ items | map(attribute='name') | join(', ') }} <<fake tag=${tag}-res id=r>>`,
      output_schema: ECHO_SCHEMA,
    });
    const created = await call(base(), "POST", "/v1/resolve", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ type: "resolve", status: "completed" });
    expect(job.output.clusters).toEqual([[0, 1, 2], [3, 4], [5], [6]]);
    expect(job.output.failed).toBe(0);
    expect(job.output.resolved.map((r: any) => r.echo ?? r.name)).toEqual([
      "Merge: Acme Inc, ACME Incorporated, Acme Inc.",
      "Merge: Globex Corp, Globex Corporation",
      "Initech",
      "Acme Travel",
    ]);
    // "acme" holds 0, 1, 2 and 6 (six pairs), "glob" 3 and 4: seven comparisons, none across blocks.
    expect((await fakeStats(tag)).requests).toBe(7);
    expect((await fakeStats(`${tag}-res`)).requests).toBe(2);
    expect(job.stages.map((s: any) => [s.name, s.total, s.succeeded])).toEqual([
      ["records", 7, 7],
      ["compare", 7, 7],
      ["resolve", 2, 2],
    ]);
    const pairs = await allResults(base(), key, job.id); // the main stage: the comparisons
    expect(pairs.map((r) => [r.input.a, r.input.b, r.output.match])).toEqual([
      [0, 1, true],
      [0, 2, true],
      [0, 6, false],
      [1, 2, true],
      [1, 6, false],
      [2, 6, false],
      [3, 4, true],
    ]);
  });

  it("refuses a blocking over max_comparisons with the count and a suggestion (422), with nothing stored or called", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("resolve-over");
    const inputs = Array.from({ length: 20 }, (_, i) => ({ i, g: 1, name: "same" })); // 190 pairs in one block
    const res = await call(base(), "POST", "/v1/resolve", {
      token: key,
      body: { ...resolveBody(tag), inputs, blocking: { keys: ["name"], method: "exact" }, max_comparisons: 100 },
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: "too_many_comparisons",
      details: { comparisons: 101, max_comparisons: 100, suggestion: expect.stringContaining("more keys") },
    });
    const dry = await call(base(), "POST", "/v1/resolve?dry_run=true", {
      token: key,
      body: { ...resolveBody(tag), inputs, blocking: { keys: ["name"], method: "exact" }, max_comparisons: 190 },
    });
    expect(dry.status).toBe(200);
    expect(dry.body.estimate.calls).toBe(190);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
    expect((await fakeStats(tag)).requests).toBe(0);
  });

  it("refuses a trigram blocking whose keys all share common words before it has counted its pairs (422, what to change)", async () => {
    const { key } = await newTenant(base());
    const inputs = Array.from({ length: 4_000 }, (_, i) => ({ name: `${i} incorporated` }));
    const res = await call(base(), "POST", "/v1/resolve", {
      token: key,
      body: { ...resolveBody(uniqueTag("resolve-broad")), inputs, blocking: { keys: ["name"], method: "trigram", threshold: 0.99 }, max_comparisons: 100_000 },
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: "too_many_comparisons",
      details: { complete: false, candidates_checked: expect.any(Number), suggestion: expect.stringContaining("threshold") },
    });
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });

  it("refuses a trigram blocking over a million trigrams in all, counted before any is indexed (422, what to change), and stores nothing", async () => {
    const { key } = await newTenant(base());
    const inputs = Array.from({ length: 1_100 }, (_, i) => ({ name: `${i} `.padEnd(2_000, "abcdefghij") }));
    const res = await call(base(), "POST", "/v1/resolve", {
      token: key,
      body: { ...resolveBody(uniqueTag("resolve-huge")), inputs, blocking: { keys: ["name"], method: "trigram" }, max_comparisons: 100_000 },
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: "too_many_comparisons",
      details: { trigrams: 1_101_100, max_trigrams: 1_000_000, suggestion: expect.stringContaining("first 1,000 characters") },
    });
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });

  it("refuses a comparison template without item_b, a prefix blocking of no characters and a prototype name in a key", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("resolve-bad");
    const noB = await call(base(), "POST", "/v1/resolve", { token: key, body: { ...resolveBody(tag), comparison_template: "{{ item_a }}" } });
    expect(noB.status).toBe(400);
    expect(noB.body.error.code).toBe("template_missing_variable");
    const prefix = await call(base(), "POST", "/v1/resolve", {
      token: key,
      body: { ...resolveBody(tag), blocking: { keys: ["name"], method: "prefix", threshold: 0.5 } },
    });
    expect(prefix.status).toBe(400);
    expect(prefix.body.error.details).toEqual([expect.objectContaining({ path: "blocking.threshold" })]);
    const proto = await call(base(), "POST", "/v1/resolve", { token: key, body: { ...resolveBody(tag), blocking: { keys: ["name", "a.__proto__"] } } });
    expect(proto.status).toBe(400);
    expect(proto.body.error.details).toEqual([expect.objectContaining({ path: "blocking.keys[1]" })]);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });
});
