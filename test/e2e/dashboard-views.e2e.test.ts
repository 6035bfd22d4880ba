/**
 * The dashboard's views of what a job is, in real Chromium against `wrangler dev` and the fake
 * model: an ended job's output for its operator, a cascade's learned thresholds, an evaluation
 * from a job's page, what paces a job, an agent's session and a map-reduce audit tree.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { call, fake, newTenant, waitForJob } from "./harness/api.ts";
import { base, uniqueTag } from "./harness/context.ts";
import { fileBrowser, signedInPage } from "./harness/browser.ts";
import { limitedTenant, ownKeyTenant } from "./harness/limited-key.ts";
import { lookupTool, startToolServer } from "./harness/tool-server.ts";

const browser = fileBrowser();
const problems: string[] = [];

/** A tab signed in with `key` (the key lives in this tab's sessionStorage). */
const signedIn = (key: string, path = "/"): Promise<Page> => signedInPage(browser(), base(), key, path, { width: 1280, height: 900 }, problems);

const overall = (page: Page) => page.locator("#overall");

describe("the dashboard's views of a job", () => {
  it("shows an ended job's output for its operator: a filter's kept items, a classification's counts, a ranking's top k, a resolution's clusters, a join's pairs", async () => {
    const { key } = await newTenant(base());
    const json = (v: unknown) => `json:${encodeURIComponent(JSON.stringify(v))}`;
    const tag = uniqueTag("dash-out");
    const model = "openai/gpt-6-luna";
    const submit = async (path: string, body: Record<string, unknown>) =>
      (await call(base(), "POST", `${path}?wait=true`, { token: key, body: { model, ...body } })).body.id as string;
    const filter = await submit("/v1/filter", {
      inputs: [0, 1, 2].map((i) => fake(tag, `f${i}`, i === 1 ? json({ keep: false }) : "ok")),
      predicate_template: "{{ item }}",
      execution: { mode: "batch" },
    });
    const classify = await submit("/v1/classify", {
      inputs: [0, 1, 2].map((i) => fake(tag, `c${i}`, i === 2 ? json({ label: "b", confidence: 0.5 }) : "ok")),
      categories: [{ name: "a" }, { name: "b" }],
      prompt_template: "{{ item }}",
    });
    const rank = await submit("/v1/rank", {
      inputs: [3, 8].map((n, i) => fake(tag, `r${i}`, json({ score: n }))),
      criteria: "high",
      k: 1,
      prompt_template: "{{ item }}",
    });
    const resolve = await submit("/v1/resolve", {
      inputs: [{ n: "x" }, { n: "x" }, { n: "y" }],
      comparison_template: `{{ item_a }} {{ item_b }} ${fake(tag, "pair")}`,
      blocking: { keys: ["n"] },
    });
    const join = await submit("/v1/join", {
      left: [{ n: "x" }, { n: "y" }],
      right: [{ n: "x" }, { n: "z" }],
      predicate_template: `{{ left }} {{ right }} ${fake(tag, "join")}`,
      blocking: { keys: ["n"] },
    });

    const page = await signedIn(key, `/jobs/${filter}`);
    await expect.poll(() => page.locator("#filter-summary").textContent(), { timeout: 30_000 }).toBe("Kept 2 · dropped 1 · failed 0");
    expect(await page.locator("#execution").textContent()).toBe("batch · 1 provider batch (3 lines)");
    expect(await page.locator("#cost").textContent()).toMatch(/^\$0\.\d{6}$/);
    await page.goto(`${base()}/jobs/${classify}`);
    await expect.poll(() => page.locator("#label-counts tbody tr").allTextContents()).toEqual(["a2", "b1"]);
    await page.goto(`${base()}/jobs/${rank}`);
    await expect.poll(() => page.locator("#top-k li").allTextContents()).toEqual(["#1 · score 8"]);
    await page.goto(`${base()}/jobs/${resolve}`);
    await expect.poll(() => page.locator("#cluster-summary").textContent()).toBe("2 entities from 3 records · 1 with more than one record");
    expect(await page.locator("#clusters li").allTextContents()).toEqual(["#0, #1"]);
    await page.getByRole("button", { name: "Output as JSON" }).click();
    await expect.poll(() => page.getByRole("dialog").textContent()).toContain('"clusters"');
    await page.goto(`${base()}/jobs/${join}`);
    await expect.poll(() => page.locator("#join-summary").textContent()).toBe("Pairs joined: 1 of 1 judged · strategy pairs");
    expect(await page.locator("#pairs li").allTextContents()).toEqual(["left #0 · right #0"]);
  });

  it("shows a cascade with a target: who decided, the learned thresholds and the estimate with its bound", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-target");
    // Two items: both in the sample, so the oracle answers both and no threshold is learned.
    const cascade = { model: "openai/gpt-6-luna", target: { metric: "accuracy", value: 0.9 }, sample: { size: 5 }, seed: 3 };
    const body = { inputs: [0, 1].map((i) => ({ d: fake(tag, i) })), predicate_template: "Keep {{ item.d }}?", model: "openai/gpt-6-sol", cascade };
    const created = await call(base(), "POST", "/v1/filter?wait=true", { token: key, body });
    expect(created.body.status).toBe("completed");
    const page = await signedIn(key, `/jobs/${created.body.id}`);
    await expect.poll(() => page.locator("#decided-by").textContent()).toBe("Decided by the cascade: 0 · by the job's model: 0 · its sample: 2");
    const lines = await page.locator("#cascade-target p").allTextContents();
    expect(lines.slice(1)).toEqual([
      "No threshold met the target: the job's model answered every item",
      "accuracy against the job's model: 100.0 % on a sample of 2, at least 100.0 % with 95.0 % confidence",
      "Calls of the job's model: 2 · seed 3",
    ]);
    await page.close();
  });

  it("evaluates an ended job from its page: the evaluation's page shows each pass rate with its interval and the items the judge failed; the job links to it", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-eval");
    const judge = (pass: boolean) =>
      `gpt-6-sol~json:${encodeURIComponent(JSON.stringify({ verdicts: { correct: { pass, reason: pass ? "fine" : "it missed the point" } } }))}`;
    const inputs = [0, 1, 2, 3].map((i) => `paper ${i} <<fake tag=${tag} id=${i} steps=gpt-6-luna~ok,${judge(i !== 2)}>>`);
    const created = await call(base(), "POST", "/v1/filter?wait=true", {
      token: key,
      body: { inputs, predicate_template: "Keep? {{ item }}", model: "openai/gpt-6-luna" },
    });
    expect(created.body.status).toBe("completed");
    const page = await signedIn(key, `/jobs/${created.body.id}`);
    await page.locator("#evaluate summary").click();
    await page.getByLabel("Criteria (one a line: name: what passing means)").fill("correct: The answer is right for its input");
    await page.getByLabel("Sample size").fill("4");
    await page.getByRole("button", { name: "Start evaluation" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/jobs/") && !url.pathname.endsWith(created.body.id));
    await expect
      .poll(() => page.locator("#criteria tbody tr").allTextContents(), { timeout: 30_000 })
      .toEqual([expect.stringMatching(/^correct75\.0 %\d+\.\d %\s–\s\d+\.\d %3 of 4$/)]);
    await expect.poll(() => page.locator("#failing li").allTextContents()).toEqual(["#2 · correct: it missed the point"]);
    const evaluationId = decodeURIComponent(page.url().split("/jobs/")[1] as string);
    expect(await page.locator("#evaluates a").textContent()).toBe(created.body.id);
    await page.goto(`${base()}/jobs/${created.body.id}`);
    await expect.poll(() => page.locator("#evaluations a").allTextContents()).toEqual([evaluationId]);
    await page.close();
  });

  it("shows what paces a job: its key's limits from the provider's headers, and a cascade's cheaper model's beside them", async () => {
    const { key } = await limitedTenant(
      { rpm: 60_000, tpm: null, headers: "openai", burst_secs: 1 },
      "openai",
      {},
      { "gpt-6-luna": { rpm: 30_000, tpm: null, headers: "openai", burst_secs: 1 } },
    );
    const tag = uniqueTag("dash-pacing");
    const sure = `json:${encodeURIComponent(JSON.stringify({ keep: true, confidence: 0.5 }))}`; // unsure: the job's model decides too
    const body = {
      inputs: [0, 1, 2].map((i) => ({ d: fake(tag, i, sure) })),
      predicate_template: "Keep {{ item.d }}?",
      model: "openai/gpt-6-sol",
      cascade: { model: "openai/gpt-6-luna" },
    };
    const created = await call(base(), "POST", "/v1/filter?wait=true", { token: key, body });
    expect(created.body.status).toBe("completed");
    const page = await signedIn(key, `/jobs/${created.body.id}`);
    await expect
      .poll(() => page.locator("#pacing").textContent())
      .toBe("60,000 requests/min (the provider's headers); openai/gpt-6-luna: 30,000 requests/min (the provider's headers)");
    await page.close();
  });

  it("shows a job's fallback chain: the items each model answered, and a model whose circuit opened", async () => {
    const { key } = await ownKeyTenant(); // outages of a key of its own: other tests' pacing never sees them
    const tag = uniqueTag("dash-fallbacks");
    const body = {
      inputs: [0, 1, 2, 3].map((i) => ({ d: fake(tag, i, "gpt-6-sol~500,claude-sonnet-4-6~ok") })),
      prompt_template: "Summarize {{ item.d }}",
      model: "openai/gpt-6-sol",
      fallbacks: ["anthropic/claude-sonnet-4-6"],
      concurrency: 1,
    };
    const created = await call(base(), "POST", "/v1/map", { token: key, body });
    expect(await waitForJob(base(), key, created.body.job_id)).toMatchObject({ status: "completed", succeeded: 4 });
    const page = await signedIn(key, `/jobs/${created.body.job_id}`);
    // Three outages in a row opened the model's circuit (half open once its 30 s are over); the fallback answered all four.
    await expect
      .poll(() => page.locator("#models").textContent())
      .toMatch(/^openai\/gpt-6-sol: 0 answered, (down: its items skip it|probing after an outage) → anthropic\/claude-sonnet-4-6: 4 answered$/);
    await page.close();
  });

  it("links an agent's result to its session: the conversation with its tool calls", async () => {
    const tools = await startToolServer();
    try {
      const { key } = await newTenant(base());
      const tag = uniqueTag("dash-agent");
      const lookup = lookupTool(tools);
      const created = await call(base(), "POST", "/v1/agentic-map", {
        token: key,
        body: {
          inputs: [{ task: "Investigate the item", d: fake(tag, 0, "call:lookup:tides,text:All_done_here") }],
          agent_prompt_template: "{{ item.task }} {{ item.d }}",
          model: "openai/gpt-6-luna",
          tools: [lookup],
          max_turns: 4,
        },
      });
      expect(created.status).toBe(202);
      const page = await signedIn(key, `/jobs/${created.body.job_id}`);
      await expect.poll(() => overall(page).textContent(), { timeout: 30_000 }).toContain("1 / 1 (100 %)");
      await page.getByRole("link", { name: "Session" }).click();
      await page.waitForURL(/\/sessions\/ses_/);
      const messages = page.locator("#messages");
      await expect.poll(() => messages.textContent()).toContain("Investigate the item");
      expect(await page.locator(".tool-call").first().textContent()).toContain("→ lookup");
      expect(await page.locator(".tool-call pre").first().textContent()).toContain('"q": "tides"');
      expect(await page.locator(".message-tool").first().textContent()).toContain("result for");
      expect(await page.locator(".message-tool h3").first().innerText()).toBe("Tool result: lookup"); // as rendered, CSS included
      expect(await messages.textContent()).toContain("All done here");
    } finally {
      await tools.close();
    }
  });

  it("shows a map-reduce job's stages and its audit tree", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-mr");
    const extractions = (name: string) => encodeURIComponent(JSON.stringify([{ category: "a", name }]));
    const created = await call(base(), "POST", "/v1/map-reduce", {
      token: key,
      body: {
        inputs: [0, 1, 2, 3].map((i) => `doc ${i} <<fake tag=${tag} id=m${i} steps=json:${extractions(`n${i}`)}>>`),
        model: "openai/gpt-6-luna",
        mapper: { prompt_template: "{{ item }}" },
        docs_per_mapper: 1,
        reducer: { prompt_template: `{% for x in items %}{{ x.name }},{% endfor %} <<fake tag=${tag}>>` },
        fan_in: 2,
      },
    });
    const page = await signedIn(key, `/jobs/${created.body.job_id}`);
    const tree = page.locator("#audit-tree");
    await tree.waitFor({ timeout: 30_000 });
    expect(await page.locator(".stages").textContent()).toMatch(/map[\s\S]*shuffle[\s\S]*reduce/);
    expect(await tree.textContent()).toContain("4 documents");
    expect(await tree.locator("summary").first().textContent()).toContain("reduce:");
    expect(await tree.textContent()).toContain("map:3");
  });

  it("met no CSP violation and no script error on any of these pages", () => {
    expect(problems).toEqual([]);
  });
});
