/**
 * Evaluations (contract v4), over HTTP through the real SDKs against the fake model: a judge over a
 * seeded sample of a finished job's results, gold labels, and A/B between two jobs, each rate with
 * its Wilson interval; the evaluated job lists its evaluations and never changes; batch mode; bad
 * requests refused with nothing stored. The items' prompts carry the fake's directives, and the
 * judge (gpt-6-sol) is scripted apart from the evaluated job's model (gpt-6-luna).
 */
import { describe, expect, it } from "vitest";
import { allResults, call, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";
import { wilsonInterval } from "../../src/engine/stats.ts";
import { drawSample } from "../../src/engine/cascade-target.ts";

const JUDGE = "gpt-6-sol";
const json = (model: string, value: unknown) => `${model}~json:${encodeURIComponent(JSON.stringify(value))}`;
const verdicts = (faithful: boolean) => ({ verdicts: { faithful: { pass: faithful, reason: "r" }, brief: { pass: true, reason: "r" } } });
const CRITERIA = [
  { name: "faithful", description: "Only facts from the input" },
  { name: "brief", description: "One sentence" },
];

/** A finished filter job of `n` items: item i is kept when even; the judge finds item i unfaithful when i % 4 = 0. */
async function filterJob(key: string, tag: string, n: number) {
  const inputs = Array.from(
    { length: n },
    (_, i) => `paper ${i} <<fake tag=${tag} id=${i} steps=${json("gpt-6-luna", { keep: i % 2 === 0, reason: "r" })},${json(JUDGE, verdicts(i % 4 !== 0))}>>`,
  );
  const created = await call(base(), "POST", "/v1/filter", {
    token: key,
    body: { inputs, predicate_template: "Keep? {{ item }}", model: "openai/gpt-6-luna", max_retries: 0 },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return waitForJob(base(), key, created.body.job_id);
}

describe("evaluations", () => {
  it("judges a seeded sample and compares gold labels: pass rates and accuracy with Wilson intervals, the failing items listed, the evaluated job untouched", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("eval");
    const source = await filterJob(key, tag, 20);
    const gold = Array.from({ length: 20 }, (_, i) => ({ index: i, expected: i === 3 ? true : i % 2 === 0 })); // item 3's gold disagrees
    const body = { job_id: source.id, judge: { model: `openai/${JUDGE}`, criteria: CRITERIA }, gold, sample: { size: 10, seed: 5 }, name: "first look" };
    const dry = await call(base(), "POST", "/v1/evaluations?dry_run=true", { token: key, body });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.estimate.calls).toBe(10); // one judge call per sampled result; gold needs none

    const created = await call(base(), "POST", "/v1/evaluations", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const evaluation = await waitForJob(base(), key, created.body.job_id);
    expect(evaluation).toMatchObject({ type: "evaluation", status: "completed", evaluates: source.id, name: "first look" });
    const sampled = drawSample(20, 10, 5);
    const faithful = sampled.filter((i) => i % 4 !== 0).length;
    expect(evaluation.output).toMatchObject({ sample_size: 10, judge_failed: 0, seed: 5, confidence: 0.95 });
    expect(evaluation.output.criteria).toEqual({
      faithful: { passed: faithful, judged: 10, pass_rate: faithful / 10, interval: wilsonInterval(faithful, 10, 0.95) },
      brief: { passed: 10, judged: 10, pass_rate: 1, interval: wilsonInterval(10, 10, 0.95) },
    });
    // Kept = even; gold says item 3 should be kept too: one false negative.
    expect(evaluation.output.gold).toEqual({
      n: 20,
      matched: 19,
      accuracy: 0.95,
      interval: wilsonInterval(19, 20, 0.95),
      precision: 1,
      recall: 10 / 11,
      f1: 20 / 21,
    });
    expect((await fakeStats(tag)).models.filter((m: string) => m === JUDGE)).toHaveLength(10);

    const failing = await allResults(base(), key, evaluation.id, "&failed=true");
    expect(failing.map((r) => r.index)).toEqual(sampled.filter((i) => i % 4 === 0));
    expect(failing[0]).toMatchObject({ verdicts: { faithful: { pass: false } }, failed: true });
    const item3 = (await allResults(base(), key, evaluation.id)).find((r) => r.index === 3);
    expect(item3).toMatchObject({ gold_match: false, expected: true, output: { keep: false } });
    const judged = await allResults(base(), key, evaluation.id, "&stage=judge");
    expect(judged.map((r) => r.index).sort((a, b) => a - b)).toEqual(sampled);

    // The evaluated job lists its evaluations, and is as it was.
    const after = (await call(base(), "GET", `/v1/jobs/${source.id}`, { token: key })).body;
    expect(after.evaluations).toEqual([evaluation.id]);
    expect({ ...after, evaluations: undefined }).toEqual({ ...source, evaluations: undefined });
    expect((await call(base(), "GET", `/v1/jobs/${source.id}/results?failed=true`, { token: key })).status).toBe(400); // verdicts are an evaluation's
  });

  it("compares two jobs with the same inputs: each pair asked in both orders, a disagreement a tie, A's win rate with its interval", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("eval-ab");
    // Per item, the judge's answers in order: to A-then-B, then to B-then-A (concurrency 1: every A-then-B call goes first).
    const answers = [
      ["A", "B"],
      ["B", "A"],
      ["A", "A"],
      ["A", "B"],
      ["tie", "tie"],
      ["A", "B"],
    ];
    const inputs = answers.map((pair, i) => `q${i} <<fake tag=${tag} id=${i} steps=gpt-6-luna~ok,${pair.map((w) => json(JUDGE, { winner: w })).join(",")}>>`);
    const run = async (model: string) =>
      waitForJob(
        base(),
        key,
        (await call(base(), "POST", "/v1/map", { token: key, body: { inputs, prompt_template: "Answer: {{ item }}", model } })).body.job_id,
      );
    const a = await run("openai/gpt-6-luna");
    const b = await run("openai/gpt-6-luna");
    const body = {
      job_id: a.id,
      compare: { job_id_b: b.id },
      judge: { model: `openai/${JUDGE}`, criteria: [CRITERIA[0]] },
      sample: { size: 6 },
      concurrency: 1,
    };
    const evaluation = await waitForJob(base(), key, (await call(base(), "POST", "/v1/evaluations", { token: key, body })).body.job_id);
    expect(evaluation.status).toBe("completed");
    expect(evaluation.output.compare).toMatchObject({ wins_a: 3, wins_b: 1, ties: 2, win_rate_a: { value: 4 / 6 } });
    expect(evaluation.output.sample_size).toBe(6);
    expect(evaluation.stages.map((s: { name: string; total: number }) => [s.name, s.total])).toEqual([
      ["judge_ab", 6],
      ["judge_ba", 6],
      ["items", 6],
    ]);

    // Another job's inputs are not these: 400 at compare.job_id_b.
    const other = await waitForJob(
      base(),
      key,
      (
        await call(base(), "POST", "/v1/map", {
          token: key,
          body: { inputs: inputs.map((s) => `${s}!`), prompt_template: "{{ item }}", model: "openai/gpt-6-luna" },
        })
      ).body.job_id,
    );
    const refused = await call(base(), "POST", "/v1/evaluations", { token: key, body: { ...body, compare: { job_id_b: other.id } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0].path).toBe("compare.job_id_b");
  });

  it("compares gold labels alone without a model call, and a judge that always names the first position gives only ties", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("eval-gold");
    const source = await filterJob(key, tag, 4);
    const before = (await fakeStats(tag)).requests;
    const gold = await waitForJob(
      base(),
      key,
      (
        await call(base(), "POST", "/v1/evaluations", {
          token: key,
          body: { job_id: source.id, gold: [0, 1, 2, 3].map((index) => ({ index, expected: index % 2 === 0 })) },
        })
      ).body.job_id,
    );
    expect(gold.output.gold).toMatchObject({ n: 4, matched: 4, accuracy: 1, precision: 1, recall: 1, f1: 1 });
    expect(gold.total_attempts).toBe(0);
    expect((await fakeStats(tag)).requests).toBe(before); // no call at all

    const first = uniqueTag("eval-first");
    const inputs = [0, 1, 2, 3].map((i) => `q${i} <<fake tag=${first} id=${i} steps=gpt-6-luna~ok,${json(JUDGE, { winner: "A" })}>>`);
    const run = async () =>
      (
        await waitForJob(
          base(),
          key,
          (await call(base(), "POST", "/v1/map", { token: key, body: { inputs, prompt_template: "{{ item }}", model: "openai/gpt-6-luna" } })).body.job_id,
        )
      ).id;
    const [a, b] = [await run(), await run()];
    const biased = await waitForJob(
      base(),
      key,
      (
        await call(base(), "POST", "/v1/evaluations", {
          token: key,
          body: { job_id: a, compare: { job_id_b: b }, judge: { model: `openai/${JUDGE}`, criteria: [CRITERIA[0]] }, sample: { size: 4 } },
        })
      ).body.job_id,
    );
    expect(biased.output.compare).toMatchObject({ wins_a: 0, wins_b: 0, ties: 4, win_rate_a: { value: 0.5 } });
  });

  it("recovers a judge call that failed: asked again, its item decided again, the rates made anew", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("eval-recover");
    // Item 1's judge answers 400 first (a permanent failure with max_retries 0), then a verdict.
    const judged = `${JUDGE}~400,${json(JUDGE, verdicts(false))}`;
    const inputs = [0, 1, 2].map((i) => `claim ${i} <<fake tag=${tag} id=${i} steps=gpt-6-luna~ok,${i === 1 ? judged : json(JUDGE, verdicts(true))}>>`);
    const target = await waitForJob(
      base(),
      key,
      (await call(base(), "POST", "/v1/map", { token: key, body: { inputs, prompt_template: "{{ item }}", model: "openai/gpt-6-luna" } })).body.job_id,
    );
    expect(target.status).toBe("completed");
    const body = { job_id: target.id, judge: { model: `openai/${JUDGE}`, criteria: CRITERIA }, sample: { size: 3 }, max_retries: 0 };
    const first = await waitForJob(base(), key, (await call(base(), "POST", "/v1/evaluations", { token: key, body })).body.job_id);
    expect(first.output).toMatchObject({ sample_size: 2, judge_failed: 1, criteria: { faithful: { passed: 2, judged: 2 } } });
    expect((await allResults(base(), key, first.id)).find((r) => r.index === 1)).toMatchObject({ verdicts: null, judge_error: expect.stringContaining("400") });
    expect((await call(base(), "POST", `/v1/jobs/${first.id}/recover`, { token: key, body: {} })).status).toBe(202);
    const again = await waitForJob(base(), key, first.id);
    expect(again.output).toMatchObject({ sample_size: 3, judge_failed: 0, criteria: { faithful: { passed: 2, judged: 3 } } });
    expect((await allResults(base(), key, first.id, "&failed=true")).map((r) => r.index)).toEqual([1]);
  });

  it("runs its judge calls through the provider's batch API at the batch price", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("eval-batch");
    const source = await filterJob(key, tag, 6);
    const body = { job_id: source.id, judge: { model: `openai/${JUDGE}`, criteria: CRITERIA }, sample: { size: 6, seed: 1 }, execution: { mode: "batch" } };
    const evaluation = await waitForJob(base(), key, (await call(base(), "POST", "/v1/evaluations", { token: key, body })).body.job_id, 60_000);
    expect(evaluation).toMatchObject({ status: "completed", execution: { mode: "batch" }, output: { sample_size: 6 } });
    expect(evaluation.batches.length).toBeGreaterThan(0);
    const stats = await fakeStats(tag);
    expect(stats.models.filter((m: string) => m === JUDGE)).toHaveLength(6);
    expect(stats.batched).toBe(6);
  });

  it("refuses what it cannot evaluate with a clear 4xx, storing nothing", async () => {
    const { key } = await newTenant(base());
    const { key: stranger } = await newTenant(base());
    const tag = uniqueTag("eval-bad");
    const source = await filterJob(key, tag, 3);
    const judge = { model: `openai/${JUDGE}`, criteria: CRITERIA };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ job_id: source.id }, 400, "judge"],
      [{ job_id: source.id, compare: { job_id_b: source.id }, gold: [{ index: 0, expected: true }] }, 400, "compare"],
      [{ job_id: source.id, judge: { ...judge, criteria: [CRITERIA[0], CRITERIA[0]] } }, 400, "judge.criteria[1].name"],
      [{ job_id: source.id, gold: [{ index: 7, expected: true }] }, 400, "gold[0].index"],
      [{ job_id: source.id, judge, sample: { size: 0 } }, 400, "sample.size"],
      [{ job_id: "job_nope", judge }, 404, ""],
    ];
    for (const [body, status, path] of cases) {
      const res = await call(base(), "POST", "/v1/evaluations", { token: key, body });
      expect(res.status, JSON.stringify(body)).toBe(status);
      if (path) expect(res.body.error.details.map((d: { path: string }) => d.path).join(" ")).toContain(path);
    }
    // Another tenant's job is not found.
    expect((await call(base(), "POST", "/v1/evaluations", { token: stranger, body: { job_id: source.id, judge } })).status).toBe(404);
    // A job still running: 409.
    const slow = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { inputs: [`x <<fake tag=${tag}-slow id=0 ms=3000>>`], prompt_template: "{{ item }}", model: "openai/gpt-6-luna" },
    });
    expect((await call(base(), "POST", "/v1/evaluations", { token: key, body: { job_id: slow.body.job_id, judge } })).status).toBe(409);
    await waitForJob(base(), key, slow.body.job_id);
    const jobs = (await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs;
    expect(jobs.map((j: { type: string }) => j.type).sort()).toEqual(["filter", "map"]);
  });
});
