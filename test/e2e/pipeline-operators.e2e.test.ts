/**
 * Operator steps of a pipeline over HTTP (contract v3: filter, classify, rank and resolve are each
 * "also a pipeline step type of the same name"), through the real SDKs against the fake model: a
 * filter with a cascade feeds a rank, whose top item an llm step reports on; each step's stages
 * are its operator's under its path, priced per model; `?stage=steps` lists each step once; a
 * filter step runs through the provider's batch API when its `execution` asks; a list too large
 * for resolve's `max_comparisons` is refused at submission when it is the pipeline's input.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const answer = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;

describe("pipeline operator steps", () => {
  it("a filter with a cascade, then a rank over the kept items, then an llm step on the best: each step's value feeds the next", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("pipe-ops");
    // Each paper's calls consume its steps in order: the cheaper model's verdict, the job's model's (when unsure), then its score.
    const papers = [
      [answer({ keep: true, confidence: 0.97 }), answer({ score: 6 })],
      [answer({ keep: false, confidence: 0.96 })],
      [answer({ keep: true, confidence: 0.5 }), answer({ keep: true }), answer({ score: 9 })],
      [answer({ keep: true, confidence: 0.4 }), answer({ keep: false })],
    ].map((steps, i) => ({ title: `paper ${i}`, d: fake(tag, i, steps.join(",")) }));
    const body = {
      model: "openai/gpt-6-sol",
      concurrency: 4,
      max_retries: 0,
      inputs: { papers, topic: "translation" },
      steps: [
        {
          id: "screen",
          type: "filter",
          inputs_from: "${papers}",
          predicate_template: "About {{ topic }}? {{ item.title }} {{ item.d }}",
          cascade: { model: "openai/gpt-6-luna" },
        },
        { id: "best", type: "rank", inputs_from: "${screen.items}", criteria: "novelty", k: 1, prompt_template: "{{ item.title }} {{ item.d }}" },
        { id: "report", type: "llm", prompt_template: `Report on {{ best[0].item.title }} <<fake tag=${tag} id=report steps=text:REPORT>>` },
      ],
    };
    const dry = await call(base(), "POST", "/v1/pipelines?dry_run=true", { token: key, body });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.estimate.by_stage).toMatchObject({
      "screen/cascade": { calls: 4 },
      "screen/items": { calls: 4 },
      "best/score": { calls: 1 },
      report: { calls: 1 },
    });

    const created = await call(base(), "POST", "/v1/pipelines", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", output: "REPORT" });
    expect(job.stages.map((s: any) => [s.name, s.status, s.total])).toEqual([
      ["screen/cascade", "completed", 4],
      ["screen/items", "completed", 4],
      ["best/score", "completed", 2],
      ["best/compare", "skipped", 0],
      ["report", "completed", 1],
      ["steps", "completed", 3],
    ]);
    // Each stage says its step (the step list groups by it, not by names); the pipeline's own has none.
    expect(job.stages.map((s: any) => s.step ?? null)).toEqual(["screen", "screen", "best", "best", "report", null]);
    const stage = (name: string) => job.stages.find((s: any) => s.name === name);
    expect(stage("screen/cascade").cost_usd).toBeGreaterThan(0); // priced at the cheaper model's rates
    expect(stage("screen/items").cost_usd).toBeGreaterThan(stage("screen/cascade").cost_usd / 4); // two calls of the job's model, which costs ~16×

    const steps = await allResults(base(), key, job.id, "&stage=steps");
    expect(steps.map((s) => [s.step, s.status])).toEqual([
      ["screen", "completed"],
      ["best", "completed"],
      ["report", "completed"],
    ]);
    expect(steps[0].output).toEqual({ kept: [0, 2], dropped: 2, failed: 0, decided_by: { cascade: 2, model: 2 }, items: [papers[0], papers[2]] });
    expect(steps[1].output).toEqual([{ index: 1, score: 9, item: papers[2] }]);

    const screened = await allResults(base(), key, job.id, `&stage=${encodeURIComponent("screen/items")}`);
    expect(screened.map((r) => [r.index, r.stage, r.decided_by, r.output.keep])).toEqual([
      [0, "screen/items", "cascade", true],
      [1, "screen/items", "cascade", false],
      [2, "screen/items", "model", true],
      [3, "screen/items", "model", false],
    ]);
    const stats = await fakeStats(tag);
    expect(stats.models.filter((m: string) => m === "gpt-6-luna")).toHaveLength(4); // the cascade's calls
    expect(stats.requests).toBe(4 + 2 + 2 + 1);
  });

  it("a classify step runs through the provider's batch API when its execution asks; the llm step after it runs realtime", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("pipe-batch");
    const reviews = ["great", "awful", "fine"].map((text, i) => ({ text, d: fake(tag, i, answer({ label: i === 1 ? "neg" : "pos", confidence: 0.9 })) }));
    const body = {
      model: "openai/gpt-6-luna",
      inputs: { reviews },
      steps: [
        {
          id: "labels",
          type: "classify",
          inputs_from: "${reviews}",
          categories: [{ name: "pos" }, { name: "neg" }],
          prompt_template: "{{ item.text }} {{ item.d }}",
          execution: { mode: "batch" },
        },
        { id: "tally", type: "llm", prompt_template: `Counts {{ labels.counts }} <<fake tag=${tag} id=tally steps=text:DONE>>` },
      ],
    };
    const created = await call(base(), "POST", "/v1/pipelines", { token: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ status: "completed", output: "DONE", execution: { mode: "batch" } });
    expect(job.batches).toHaveLength(1);
    expect(job.batches[0]).toMatchObject({ stage: "labels/items", requests: 3, status: "ended" });
    const steps = await allResults(base(), key, job.id, "&stage=steps");
    expect(steps[0].output).toEqual({ counts: { pos: 2, neg: 1 }, failed: 0, labels: ["pos", "neg", "pos"] });
    const stats = await fakeStats(tag);
    expect([stats.requests, stats.batched]).toEqual([4, 3]); // the three labels batched, the tally realtime
  });

  it("refuses at submission, at the step's path: a job field on a step, and a resolve over the pipeline's inputs past max_comparisons (422 with the count)", async () => {
    const { key } = await newTenant(base());
    const records = Array.from({ length: 6 }, (_, i) => ({ name: "acme", i }));
    const step = {
      id: "entities",
      type: "resolve",
      inputs_from: "${records}",
      comparison_template: "{{ item_a }} {{ item_b }}",
      blocking: { keys: ["name"] },
      max_comparisons: 10,
    };
    const over = await call(base(), "POST", "/v1/pipelines", { token: key, body: { model: "openai/gpt-6-luna", inputs: { records }, steps: [step] } });
    expect(over.status).toBe(422);
    expect(over.body.error).toMatchObject({ code: "too_many_comparisons", details: { max_comparisons: 10, step: "steps[0]" } });
    const jobField = await call(base(), "POST", "/v1/pipelines", {
      token: key,
      body: { model: "openai/gpt-6-luna", inputs: { records }, steps: [{ ...step, max_comparisons: 100, webhook: { url: "https://example.com/h" } }] },
    });
    expect(jobField.status).toBe(400);
    expect(jobField.body.error.details).toEqual([{ path: "steps[0].webhook", message: expect.stringContaining("set it on the pipeline") }]);
    const jobs = await call(base(), "GET", "/v1/jobs", { token: key });
    expect(jobs.body.jobs).toHaveLength(0); // nothing stored
  });
});
