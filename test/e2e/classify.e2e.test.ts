/**
 * POST /v1/classify over HTTP, through the real OpenAI SDK against the fake model: each item's
 * answer is held to the labels (the schema sent to the model: the fake answers "ok" with the
 * first label and a confidence within [0, 1]; a label outside the list is invalid and retried
 * with guidance); the job's output counts the items per label; multi-label answers count each
 * label once; bad category lists are refused with nothing stored.
 */
import { describe, expect, it } from "vitest";
import { allResults, call, fake, newTenant, waitForJob } from "./harness/api.ts";
import { base, fakeStats, uniqueTag } from "./harness/context.ts";

const MODEL = "openai/gpt-6-luna";
const answer = (value: unknown) => `json:${encodeURIComponent(JSON.stringify(value))}`;
const CATEGORIES = [{ name: "complaint", description: "the customer is unhappy" }, { name: "praise" }, { name: "question" }];

const classifyBody = (tag: string, steps: string[], extra: Record<string, unknown> = {}) => ({
  inputs: steps.map((s, i) => ({ text: `review ${i}`, d: fake(tag, i, s) })),
  categories: CATEGORIES,
  model: MODEL,
  concurrency: 4,
  max_retries: 1,
  ...extra,
});

async function run(key: string, body: Record<string, unknown>) {
  const created = await call(base(), "POST", "/v1/classify", { token: key, body });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  const job = await waitForJob(base(), key, created.body.job_id);
  return { job, results: await allResults(base(), key, job.id) };
}

describe("POST /v1/classify", () => {
  it("labels every item from the list (the default template renders the item as Python would print it) and counts the items per label", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("classify");
    const steps = ["ok", answer({ label: "praise", confidence: 0.8 }), answer({ label: "question", confidence: 0.6 }), "401", "ok"];
    const { job, results } = await run(key, classifyBody(tag, steps));
    expect(job).toMatchObject({ type: "classify", status: "completed", total: 5, succeeded: 4, failed: 1 });
    expect(job.output).toEqual({ counts: { complaint: 2, praise: 1, question: 1 }, failed: 1 });
    expect(results.map((r) => r.output)).toEqual([
      { label: "complaint", confidence: 1 },
      { label: "praise", confidence: 0.8 },
      { label: "question", confidence: 0.6 },
      null,
      { label: "complaint", confidence: 1 },
    ]);
    const prompts: string[] = (await fakeStats(tag)).prompts;
    expect(prompts.find((p) => p.includes("review 0"))).toContain("Classify this item:\n{'text': 'review 0'");
  });

  it("a label outside the list is invalid: the call is retried with guidance", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("classify-retry");
    const { job, results } = await run(key, classifyBody(tag, [`${answer({ label: "spam", confidence: 0.9 })},ok`]));
    expect(job.output).toEqual({ counts: { complaint: 1, praise: 0, question: 0 }, failed: 0 });
    expect(results[0]).toMatchObject({ success: true, attempts: 2, output: { label: "complaint" } });
    expect((await fakeStats(tag)).requests).toBe(2);
  });

  it("multi_label: every label that applies, each counted once per item", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("classify-multi");
    const steps = [answer({ labels: ["praise", "question"], confidence: 0.7 }), "ok", answer({ labels: [], confidence: 0.9 })];
    const { job, results } = await run(key, classifyBody(tag, steps, { multi_label: true, prompt_template: "{{ item.text }} {{ item.d }}" }));
    expect(job.output).toEqual({ counts: { complaint: 1, praise: 1, question: 1 }, failed: 0 });
    expect(results.map((r) => r.output.labels)).toEqual([["praise", "question"], ["complaint"], []]);
  });

  it("a cascade: the cheaper model's label stands when it is sure enough, else the job's model labels", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("classify-cascade");
    const steps = [
      answer({ label: "praise", confidence: 0.95 }),
      `${answer({ label: "praise", confidence: 0.5 })},${answer({ label: "question", confidence: 0.8 })}`,
    ];
    const { job, results } = await run(
      key,
      classifyBody(tag, steps, { model: "openai/gpt-6-sol", cascade: { model: "openai/gpt-6-luna", accept_above: 0.9 } }),
    );
    expect(job.output).toEqual({ counts: { complaint: 0, praise: 1, question: 1 }, failed: 0, decided_by: { cascade: 1, model: 1 } });
    expect(results.map((r) => [r.decided_by, r.output.label])).toEqual([
      ["cascade", "praise"],
      ["model", "question"],
    ]);
    expect((await fakeStats(tag)).models.sort()).toEqual(["gpt-6-luna", "gpt-6-luna", "gpt-6-sol"]);
  });

  it("refuses a list of one, duplicate names, too many categories and a template without `item`, with nothing stored", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("classify-bad");
    const bad = async (extra: Record<string, unknown>, path: string) => {
      const res = await call(base(), "POST", "/v1/classify", { token: key, body: { ...classifyBody(tag, ["ok"]), ...extra } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    };
    await bad({ categories: [{ name: "only" }] }, "categories");
    await bad({ categories: [{ name: "a" }, { name: "b" }, { name: "a" }] }, "categories[2].name");
    await bad({ categories: Array.from({ length: 201 }, (_, i) => ({ name: `c${i}` })) }, "categories");
    await bad({ prompt_template: "Classify it" }, "prompt_template");
    await bad({ cascade: { model: MODEL, reject_below: 0.1 } }, "cascade.reject_below");
    expect((await call(base(), "GET", "/v1/jobs", { token: key })).body.jobs).toEqual([]);
    expect((await fakeStats(tag)).requests).toBe(0);
  });
});
