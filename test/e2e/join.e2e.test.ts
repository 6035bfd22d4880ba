/**
 * POST /v1/join (contract v4, "Embeddings, joins, embedding blocking"), over HTTP against the fake
 * model, its answers scripted from inside the predicate (the directive reads `left` and `right`):
 * one call per blocked pair, or one per left item choosing among its candidates (the semantic-join
 * rewrite), `auto` picking the cheaper, a cascade on pairs, and the bounds refused with nothing stored.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const enc = (value: unknown) => encodeURIComponent(JSON.stringify(value));
const LEFT = [
  { id: "ibm", name: "IBM" },
  { id: "acme", name: "Acme Inc." },
  { id: "none", name: "Initech" },
];
const RIGHT = [
  { id: "acme", name: "ACME Incorporated" },
  { id: "ibm", name: "International Business Machines" },
  { id: "globex", name: "Globex" },
];

/** A pair matches when the records share an id: the fake is told so by the directive the predicate renders. */
const pairPredicate = (tag: string) =>
  `Same company? {{ left.name }} / {{ right.name }} <<fake tag=${tag} id={{ left.id }}-{{ right.id }} steps={{ 'json:${enc({ match: true, reason: "same" })}' if left.id == right.id else 'json:${enc({ match: false, reason: "different" })}' }}>>`;

async function join(body: Record<string, unknown>) {
  const { key } = await newTenant(base());
  const created = await call(base(), "POST", "/v1/join", { token: key, body: { left: LEFT, right: RIGHT, model: "openai/gpt-6-luna", ...body } });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return { key, job: await waitForJob(base(), key, created.body.job_id) };
}

describe("POST /v1/join", () => {
  it("pairs: judges every pair once and answers the matching ones, by left then right", async () => {
    const tag = uniqueTag("join-pairs");
    const { key, job } = await join({ predicate_template: pairPredicate(tag) });
    expect(job).toMatchObject({
      type: "join",
      status: "completed",
      output: {
        pairs: [
          [0, 1],
          [1, 0],
        ],
        failed: 0,
        strategy: "pairs",
        comparisons: 9,
      },
    });
    expect((await fakeStats(tag)).requests).toBe(9);
    const results = await allResults(base(), key, job.id);
    expect(results.find((r) => r.input.l === 0 && r.input.r === 1)?.output).toMatchObject({ match: true });
    // A dry run counts the same nine calls, their prompts rendered.
    const dry = await call(base(), "POST", "/v1/join?dry_run=true", {
      token: key,
      body: { left: LEFT, right: RIGHT, model: "openai/gpt-6-luna", predicate_template: pairPredicate(tag) },
    });
    expect(dry.status, JSON.stringify(dry.body).slice(0, 300)).toBe(200);
    expect((dry.body.estimate ?? dry.body).calls).toBe(9);
  });

  it("pairs with a blocking judges only the pairs whose keys agree across the lists", async () => {
    const tag = uniqueTag("join-blocked");
    // Prefix blocking on the first letter: IBM–International, Acme–ACME; Initech–International too (all "i").
    const { job } = await join({ predicate_template: pairPredicate(tag), blocking: { keys: ["name"], method: "prefix", threshold: 1 } });
    expect(job.output).toMatchObject({
      pairs: [
        [0, 1],
        [1, 0],
      ],
      comparisons: 3,
    });
    expect((await fakeStats(tag)).requests).toBe(3);
  });

  it("classify: one call per left item chooses among the right items; auto picks it when it is cheaper", async () => {
    const tag = uniqueTag("join-classify");
    // The left item says which candidate the fake chooses (its `want`), so the answer is scripted per call.
    const left = [
      { name: "IBM", want: [1] },
      { name: "Acme Inc.", want: [0] },
      { name: "Initech", want: [] },
    ];
    const predicate = `Same company? {{ left.name }} / {{ right.name }} <<fake tag=${tag} id={{ left.name }} steps=json:{{ ({"matches": left.want} | tojson) | urlencode }}>>`;
    for (const strategy of ["classify", "auto"]) {
      const { job } = await join({ left, predicate_template: predicate, strategy });
      expect(job.output, strategy).toMatchObject({
        pairs: [
          [0, 1],
          [1, 0],
        ],
        failed: 0,
        strategy: "classify",
        comparisons: 9,
      });
    }
    expect((await fakeStats(tag)).requests).toBe(6); // three calls each, not nine
  });

  it("a cascade applies to pairs: the cheaper model's sure answers decide, the rest go to the job's model", async () => {
    const tag = uniqueTag("join-cascade");
    const sure = (match: boolean) => enc({ match, reason: "r", confidence: 0.99 });
    const predicate = `Same? {{ left.name }} / {{ right.name }} <<fake tag=${tag} id={{ left.id }}-{{ right.id }} steps=gpt-6-luna~json:{{ '${sure(true)}' if left.id == right.id else '${sure(false)}' }},gpt-6-sol~json:${enc({ match: false })}>>`;
    const { job } = await join({ predicate_template: predicate, model: "openai/gpt-6-sol", cascade: { model: "openai/gpt-6-luna", score: "self_reported" } });
    expect(job.output).toMatchObject({
      pairs: [
        [0, 1],
        [1, 0],
      ],
      decided_by: { cascade: 9, model: 0 },
    });
  });

  it("refuses what cannot run, with nothing stored: too many pairs, a predicate without right, classify over too many candidates, a cascade with classify", async () => {
    const { key } = await newTenant(base());
    const body = { left: LEFT, right: RIGHT, model: "openai/gpt-6-luna", predicate_template: "{{ left.name }} / {{ right.name }}" };
    const tooMany = await call(base(), "POST", "/v1/join", { token: key, body: { ...body, max_comparisons: 8 } });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error).toMatchObject({ code: "too_many_comparisons", details: { comparisons: 9, max_comparisons: 8 } });
    const noRight = await call(base(), "POST", "/v1/join", { token: key, body: { ...body, predicate_template: "{{ left.name }}" } });
    expect(noRight.status).toBe(400);
    expect(noRight.body.error.code).toBe("template_missing_variable");
    const wide = { ...body, right: Array.from({ length: 201 }, (_, i) => ({ name: `r${i}` })), strategy: "classify" };
    expect((await call(base(), "POST", "/v1/join", { token: key, body: wide })).body.error.details[0].path).toBe("strategy");
    const cascaded = await call(base(), "POST", "/v1/join", { token: key, body: { ...body, strategy: "classify", cascade: { model: "openai/gpt-6-sol" } } });
    expect(cascaded.body.error.details[0].path).toBe("cascade");
    // The blocking is read as resolve's: a trigram threshold is an overlap from 0 to 1.
    const overlap = await call(base(), "POST", "/v1/join", { token: key, body: { ...body, blocking: { keys: ["name"], method: "trigram", threshold: 5 } } });
    expect(overlap.status).toBe(400);
    expect(overlap.body.error.details[0].path).toBe("blocking.threshold");
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });
});
