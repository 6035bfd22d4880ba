/**
 * Cascades with a guarantee (contract v4), over HTTP through the real SDKs against the fake model,
 * whose cheaper and job's models are scripted apart (`MODEL~STEP`): the cheaper model answers every
 * item, the job's model (the oracle) a seeded sample; the thresholds learned from the sample
 * decide the rest; the job says what it learned. Filter and classify, realtime and batch; bad
 * targets refused with nothing stored. The statistics themselves: test/unit/engine/cascade-target.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const CHEAP = "gpt-6-luna";
const ORACLE = "gpt-6-sol";
const json = (model: string, value: unknown) => `${model}~json:${encodeURIComponent(JSON.stringify(value))}`;

/** Item i: the oracle keeps the even ones; the cheaper model is sure and right on two items in three, unsure and wrong on the third. */
function filterItems(tag: string, n: number) {
  return Array.from({ length: n }, (_, i) => {
    const keep = i % 2 === 0;
    const sure = i % 3 !== 2;
    const cheap = sure ? { keep, confidence: 0.98, reason: "sure" } : { keep: !keep, confidence: 0.6, reason: "unsure" };
    return { title: `paper ${i}`, d: fake(tag, i, `${json(CHEAP, cheap)},${json(ORACLE, { keep, reason: "the oracle" })}`) };
  });
}

const filterBody = (tag: string, n: number, cascade: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  inputs: filterItems(tag, n),
  predicate_template: "About translation? {{ item.title }} {{ item.d }}",
  model: `openai/${ORACLE}`,
  concurrency: 16,
  max_retries: 0,
  cascade: { model: `openai/${CHEAP}`, ...cascade },
  ...extra,
});

const TARGET = { target: { metric: "accuracy", value: 0.8 }, confidence: 0.8, sample: { size: 40 }, seed: 7 };

describe("a cascade with a target", () => {
  it("learns its thresholds from a seeded sample the job's model answers, and decides the rest with them (filter)", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("target-filter");
    const n = 120;
    const body = filterBody(tag, n, TARGET);
    const dry = await call(base(), "POST", "/v1/filter?dry_run=true", { token: key, body });
    expect(dry.body.estimate.calls).toBe(2 * n); // every cheaper call, and at most every item for the oracle (the sample included)
    expect(dry.body.estimate.method).toContain("the 40 sampled items");
    const created = await call(base(), "POST", "/v1/filter", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job.status).toBe("completed");
    const c = job.output.cascade;
    expect(c).toMatchObject({ sample_size: 40, met: true, seed: 7, estimate: { metric: "accuracy", value: 1, confidence: 0.8 } });
    expect(c.estimate.lower_bound).toBeGreaterThanOrEqual(0.8);
    expect(c.accept_above).toBeGreaterThan(0.6); // the unsure answers (keep-confidence 0.6 or 0.4) never decide
    expect(c.reject_below).toBeLessThan(0.4);

    const results = await allResults(base(), key, job.id);
    const sampled = (await allResults(base(), key, job.id, "&stage=sample")).map((r) => r.index);
    expect(sampled).toHaveLength(40);
    const unsureOthers = results.filter((r) => r.index % 3 === 2 && !sampled.includes(r.index)).length;
    expect(job.output.decided_by).toEqual({ sample: 40, cascade: n - 40 - unsureOthers, model: unsureOthers });
    expect(c.oracle_calls).toBe(40 + unsureOthers);
    for (const r of results) {
      expect(r.decided_by).toBe(sampled.includes(r.index) ? "sample" : r.index % 3 === 2 ? "model" : "cascade");
      expect(r.output.keep).toBe(r.index % 2 === 0); // every final answer is the oracle's
    }
    expect(results.find((r) => r.decided_by === "sample")?.output.reason).toBe("the oracle");
    const stats = await fakeStats(tag);
    expect(stats.models.filter((m: string) => m === CHEAP)).toHaveLength(n);
    expect(stats.models.filter((m: string) => m === ORACLE)).toHaveLength(c.oracle_calls);

    // The same seed draws the same sample.
    const again = await waitForJob(
      base(),
      key,
      (await call(base(), "POST", "/v1/filter", { token: key, body: filterBody(uniqueTag("target-again"), n, TARGET) })).body.job_id,
    );
    expect((await allResults(base(), key, again.id, "&stage=sample")).map((r) => r.index)).toEqual(sampled);
  });

  it("sends every item to the job's model when the cheaper model's confidence says nothing (met false)", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("target-none");
    // Sure and wrong on every third item: no thresholds meet accuracy 0.95 without deciding some of them.
    const inputs = Array.from({ length: 30 }, (_, i) => {
      const keep = i % 2 === 0;
      const cheap = { keep: i % 3 === 0 ? !keep : keep, confidence: 0.99 };
      return { title: `p${i}`, d: fake(tag, i, `${json(CHEAP, cheap)},${json(ORACLE, { keep })}`) };
    });
    const body = { ...filterBody(tag, 0, { target: { metric: "accuracy", value: 0.95 }, sample: { fraction: 0.5 }, seed: 3 }), inputs };
    const job = await waitForJob(base(), key, (await call(base(), "POST", "/v1/filter", { token: key, body })).body.job_id);
    expect(job.output.cascade).toMatchObject({ met: false, accept_above: null, reject_below: null, sample_size: 15, oracle_calls: 30 });
    expect(job.output.decided_by).toEqual({ sample: 15, cascade: 0, model: 15 });
    expect(job.output.kept).toEqual(Array.from({ length: 15 }, (_, i) => 2 * i));
  });

  it("learns a classify cascade's threshold, in batch mode too (the sample goes in the provider's batches)", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("target-classify");
    const n = 90;
    const inputs = Array.from({ length: n }, (_, i) => {
      const label = i % 2 ? "praise" : "complaint";
      const cheap = i % 3 === 2 ? { label: "question", confidence: 0.5 } : { label, confidence: 0.97 };
      return `review ${i} ${fake(tag, i, `${json(CHEAP, cheap)},${json(ORACLE, { label, confidence: 1 })}`)}`;
    });
    const body = {
      inputs,
      categories: [{ name: "complaint" }, { name: "question" }, { name: "praise" }],
      model: `openai/${ORACLE}`,
      concurrency: 16,
      max_retries: 0,
      cascade: { model: `openai/${CHEAP}`, ...TARGET, sample: { size: 30 } },
      execution: { mode: "batch" },
    };
    const created = await call(base(), "POST", "/v1/classify", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id, 60_000);
    expect(job.status).toBe("completed");
    expect(job.output.cascade).toMatchObject({ met: true, sample_size: 30, reject_below: null });
    expect(job.output.cascade.accept_above).toBeGreaterThan(0.5);
    expect(job.output.counts).toEqual({ complaint: 45, question: 0, praise: 45 }); // the unsure labels were the oracle's
    expect(job.batches.length).toBeGreaterThan(0);
    expect((await fakeStats(tag)).batched).toBe((await fakeStats(tag)).requests);
  });

  it("learns a filter step's thresholds inside a pipeline: its sample under the step's path, its cascade in the step's value", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("target-pipe");
    const body = {
      model: `openai/${ORACLE}`,
      concurrency: 16,
      max_retries: 0,
      inputs: { papers: filterItems(tag, 60) },
      steps: [
        {
          id: "screen",
          type: "filter",
          inputs_from: "${papers}",
          predicate_template: "About translation? {{ item.title }} {{ item.d }}",
          cascade: { model: `openai/${CHEAP}`, ...TARGET, sample: { size: 30 } },
        },
      ],
    };
    const created = await call(base(), "POST", "/v1/pipelines", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job.status).toBe("completed");
    expect(job.stages.map((s: { name: string; total: number }) => [s.name, s.total])).toEqual([
      ["screen/cascade", 60],
      ["screen/sample", 30],
      ["screen/items", 60],
      ["steps", 1],
    ]);
    const [step] = await allResults(base(), key, job.id, "&stage=steps");
    expect(step.output.cascade).toMatchObject({ sample_size: 30, seed: 7, estimate: { metric: "accuracy" } });
    expect(step.output.kept).toEqual(Array.from({ length: 30 }, (_, i) => 2 * i));
  });

  it("scores the cheaper answers by their tokens' log-probabilities by default, by the stated confidence when asked, and without them where a model refuses them", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("logprobs");
    // Each cheaper answer states 0.99, but its tokens give its value 0.55: unsure by its logprobs.
    const items = (t: string) =>
      Array.from({ length: 4 }, (_, i) => ({
        title: `p${i}`,
        d: fake(t, i, `${json(CHEAP, { keep: true, confidence: 0.99, _p: 0.55 })},${json(ORACLE, { keep: false })}`),
      }));
    const body = (t: string, cascade: Record<string, unknown>) => ({ ...filterBody(t, 0, { accept_above: 0.9, ...cascade }), inputs: items(t) });
    const byTokens = await waitForJob(base(), key, (await call(base(), "POST", "/v1/filter", { token: key, body: body(tag, {}) })).body.job_id);
    expect(byTokens.output).toMatchObject({ kept: [], decided_by: { cascade: 0, model: 4 } });
    const cheap = await allResults(base(), key, byTokens.id, "&stage=cascade");
    expect(cheap.map((r) => [r.output.confidence, r.output.confidence_source])).toEqual(Array.from({ length: 4 }, () => [expect.closeTo(0.55, 6), "logprobs"]));
    const stated = await waitForJob(
      base(),
      key,
      (await call(base(), "POST", "/v1/filter", { token: key, body: body(uniqueTag("stated"), { score: "self_reported" }) })).body.job_id,
    );
    expect(stated.output).toMatchObject({ kept: [0, 1, 2, 3], decided_by: { cascade: 4, model: 0 } });

    // A model that refuses the parameter (400, param logprobs) is asked again without it: its stated confidence stands.
    const refusingTag = uniqueTag("no-logprobs");
    const refusing = {
      ...body(refusingTag, { model: "openai/e2e-no-logprobs" }),
      inputs: items(refusingTag).map((it) => ({ ...it, d: it.d.replaceAll(`${CHEAP}~`, "e2e-no-logprobs~") })),
    };
    const job = await waitForJob(base(), key, (await call(base(), "POST", "/v1/filter", { token: key, body: refusing })).body.job_id);
    expect(job.output).toMatchObject({ kept: [0, 1, 2, 3], decided_by: { cascade: 4, model: 0 } });
    const answers = await allResults(base(), key, job.id, "&stage=cascade");
    expect(answers.every((r) => r.success && r.output.confidence_source === "self_reported" && r.attempts === 1)).toBe(true);
    const requests = (await fakeStats(refusingTag)).requests;
    expect(requests).toBeGreaterThan(4); // the first call was refused, then answered without logprobs
    expect(requests).toBeLessThanOrEqual(8); // at most a refused call and its answer each (calls under way before the first refusal was known)

    // Anthropic's answers carry none: asking for them is a 400 at cascade.score.
    const res = await call(base(), "POST", "/v1/filter", {
      token: key,
      body: body(uniqueTag("anthropic"), { model: "anthropic/claude-sonnet-4-6", score: "logprobs" }),
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe("cascade.score");
  });

  it.each([
    ["a target with fixed thresholds", "filter", { target: { metric: "accuracy", value: 0.9 }, accept_above: 0.9 }, "cascade.accept_above"],
    ["a sample without a target", "filter", { sample: { size: 10 } }, "cascade.sample"],
    ["a target value of 1", "filter", { target: { metric: "recall", value: 1 } }, "cascade.target.value"],
    ["an empty sample", "filter", { target: { metric: "accuracy", value: 0.9 }, sample: { size: 0 } }, "cascade.sample"],
    ["precision for classify", "classify", { target: { metric: "precision", value: 0.9 } }, "cascade.target.metric"],
  ])("refuses %s with a 400 at its path, storing nothing", async (_what, operator, cascade, path) => {
    const { key } = await newTenant(base());
    const body =
      operator === "filter"
        ? filterBody(uniqueTag("target-bad"), 2, cascade)
        : { inputs: ["a"], categories: [{ name: "x" }, { name: "y" }], model: `openai/${ORACLE}`, cascade: { model: `openai/${CHEAP}`, ...cascade } };
    const res = await call(base(), "POST", `/v1/${operator}`, { token: key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path).join(" ")).toContain(path);
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
  });
});
