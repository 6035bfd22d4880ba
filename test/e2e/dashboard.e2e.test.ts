/**
 * The dashboard in real Chromium (Debian's, driven by playwright-core) against `wrangler dev` and
 * the fake model: a wrong key is refused; sign in, estimate and submit a job from the form, watch
 * the bar reach 100 % with the right counts, see a failure and re-run it, download the results;
 * the jobs list and its filter; cancel; the budget and resume; the CSP (./dashboard-views.e2e.test.ts:
 * what the pages show of a job's output, cascade, evaluation, pacing, agent sessions and audit).
 * With FANOUT_SCREENSHOTS=update the job page and the jobs list are saved as the README's
 * screenshots (docs/screenshots/); otherwise into a temporary folder.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { call, ECHO_SCHEMA, fake, newTenant } from "./harness/api.ts";
import { base, fakeStats, openGate, uniqueTag } from "./harness/context.ts";
import { ROOT } from "./harness/fanout-server.ts";
import { fileBrowser, signedInPage } from "./harness/browser.ts";
import { removeTempDirs, tempDir } from "./harness/temp-dir.ts";

const SHOTS = process.env.FANOUT_SCREENSHOTS === "update" ? join(ROOT, "docs/screenshots") : tempDir("fanout-shots-");
mkdirSync(SHOTS, { recursive: true });

const browser = fileBrowser();
const problems: string[] = [];

afterAll(() => removeTempDirs()); // the screenshots, unless they were saved as the README's

/** A tab signed in with `key` (the key lives in this tab's sessionStorage). */
const signedIn = (key: string, path = "/"): Promise<Page> => signedInPage(browser(), base(), key, path, { width: 1280, height: 900 }, problems);

const overall = (page: Page) => page.locator("#overall");

describe("the dashboard", () => {
  it("is served at / with a strict Content-Security-Policy, and refuses a wrong key", async () => {
    const res = await fetch(`${base()}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    expect(html).not.toContain("style=");

    const page = await browser().newPage();
    await page.goto(`${base()}/`);
    await page.getByLabel("API key").fill("fo_not_a_real_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.locator("#sign-in-error").textContent()).toContain("refused");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0); // a refused key is not kept
    expect(page.url()).not.toContain("fo_not_a_real_key");
    await page.close();
  });

  it("submits a job from the form after an estimate, follows it to 100 %, shows the failure and re-runs it", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash");
    const page = await signedIn(key, "/new");
    const lines = [0, 1, 2, 3].map((i) => JSON.stringify({ t: `paper ${i}`, d: fake(tag, i, "ok", 300) }));
    lines.push(JSON.stringify({ t: "paper 4", d: fake(tag, 4, "401,ok", 300) }));
    await page.getByLabel("Prompt template").fill("Summarize {{ item.t }} {{ item.d }}");
    await page.getByLabel("Inputs", { exact: true }).fill(lines.join("\n"));
    await page.getByLabel("Retries").fill("0");
    await page.getByLabel("Name (optional)").fill("Five papers");
    await page.getByRole("button", { name: "Estimate" }).click();
    await expect.poll(() => page.locator("#estimate-result").textContent()).toContain("5 calls");
    expect(await page.locator("#estimate-result").textContent()).toMatch(
      /about [\d,]+ output tokens \(at most [\d,]+\)\. About \$0\.\d{6} realtime \(at most \$0\.\d{6}\), \$0\.\d{6} through the provider's batch API\./,
    );
    await page.getByRole("button", { name: "Start job" }).click();
    await page.waitForURL(/\/jobs\/job_/);
    await expect.poll(() => page.locator(".job-name").textContent()).toBe("Five papers"); // the job's name, above its id

    await expect.poll(() => overall(page).textContent(), { timeout: 30_000 }).toContain("5 / 5 (100 %)");
    await expect.poll(() => overall(page).textContent()).toContain("4 succeeded · 1 failed");
    expect(await page.locator("#overall progress").getAttribute("value")).toBe("5");
    const failure = page.locator('#failures tr[data-kind="llm_error"]');
    await expect.poll(() => failure.textContent()).toContain("#4");
    expect(await page.locator("#results tbody tr").count()).toBe(5);
    expect(await page.locator("#effective-concurrency").textContent()).toMatch(/^\d+$/); // the README's screenshot shows "Calls at once"
    await expect.poll(() => page.locator("#cost").textContent()).toMatch(/^\$0\.\d{6}$/);
    expect(await page.locator("#execution").textContent()).toBe("realtime");
    await page.screenshot({ path: join(SHOTS, "job.png"), fullPage: true });

    await page.getByRole("button", { name: /Recover/ }).click();
    await expect.poll(() => overall(page).textContent(), { timeout: 30_000 }).toContain("5 succeeded · 0 failed");
    await page.locator("#no-failures").waitFor();

    await page.getByRole("button", { name: "Details" }).first().click();
    await expect.poll(() => page.locator("dialog pre").textContent()).toContain('"success": true');
    await page.keyboard.press("Escape");

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download results (JSONL)" }).click()]);
    const rows = readFileSync((await download.path()) as string, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.index, r.success])).toEqual([0, 1, 2, 3, 4].map((i) => [i, true]));

    // The jobs list: newest first, with its status; the filter keeps only that status.
    const slow = {
      inputs: [0, 1, 2, 3].map((i) => ({ d: fake(tag, `s${i}`, "ok", 2_000) })),
      prompt_template: "{{ item.d }}",
      model: "openai/gpt-6-luna",
      concurrency: 1,
    };
    const running = await call(base(), "POST", "/v1/map", { token: key, body: slow });
    await page.getByRole("link", { name: "Jobs", exact: true }).click();
    await expect.poll(() => page.locator("table.jobs tbody tr").first().textContent()).toContain(running.body.job_id);
    const row = page.locator("table.jobs tbody tr").nth(1);
    await expect.poll(() => row.textContent()).toContain("completed");
    expect(await row.locator("progress").getAttribute("value")).toBe("5");
    await page.screenshot({ path: join(SHOTS, "jobs.png"), fullPage: true });
    await page.getByLabel("Status").selectOption("failed");
    await page.waitForURL(/status=failed/);
    await expect.poll(() => page.locator("#view").textContent()).toContain("No jobs yet");
    await page.getByLabel("Status").selectOption("completed");
    await page.waitForURL(/status=completed/);
    await expect.poll(() => page.locator("table.jobs tbody tr").count()).toBe(1);

    // On a phone: nothing wider than the screen (the table scrolls inside its card).
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base()}/`);
    await page.locator("table.jobs").waitFor();
    const width = () => page.evaluate(() => [document.documentElement.scrollWidth, document.body.scrollWidth]);
    expect(await width()).toEqual([390, 390]);
    await page.goto(`${base()}/jobs/${running.body.job_id}`);
    await page.locator("#overall").waitFor();
    expect(await width()).toEqual([390, 390]);
    await page.goto(`${base()}/new`);
    await page.getByLabel("Prompt template").waitFor();
    expect(await width()).toEqual([390, 390]);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("#sign-in").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(problems).toEqual([]); // no CSP violation, no script error
  });

  it("submits a job in batch mode from the form: its page shows the provider batch and the cost", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-batch");
    const page = await signedIn(key, "/new");
    await page.getByLabel("Prompt template").fill("Summarize {{ item.t }} {{ item.d }}");
    await page.getByLabel("Inputs", { exact: true }).fill([0, 1].map((i) => JSON.stringify({ t: `paper ${i}`, d: fake(tag, i) })).join("\n"));
    await page.getByLabel("Execution").selectOption("batch");
    await page.getByRole("button", { name: "Start job" }).click();
    await page.waitForURL(/\/jobs\/job_/);
    await expect.poll(() => page.locator("#execution").textContent(), { timeout: 30_000 }).toBe("batch · 1 provider batch (2 lines)");
    await expect.poll(() => overall(page).textContent()).toContain("2 / 2 (100 %)");
    await expect.poll(() => page.locator("#cost").textContent()).toMatch(/^\$0\.\d{6}$/);
    expect((await fakeStats(tag)).batched).toBe(2);
  });

  it("keeps its counters adding up while a job runs: done = succeeded + failed, never above the attempts", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-count");
    // Held at the fake model's gate until the page watches: a busy machine can take longer to open the page than the job to run.
    const inputs = Array.from({ length: 30 }, (_, i) => ({ d: fake(tag, i, i % 7 === 3 ? "401" : "ok", 150).replace(">>", " gate=0>>") }));
    const created = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { inputs, prompt_template: "{{ item.d }}", model: "openai/gpt-6-luna", concurrency: 3, max_retries: 0 },
    });
    const page = await signedIn(key, `/jobs/${created.body.job_id}`);
    // Every text the overall bar and the attempts showed, as the page rendered them.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      const record = () =>
        seen.push(`${document.querySelector("#overall label")?.textContent ?? ""} | ${document.querySelector(".facts dd:nth-of-type(3)")?.textContent ?? ""}`);
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await openGate(tag);
    await expect.poll(() => overall(page).textContent(), { timeout: 30_000 }).toContain("30 / 30 (100 %)");
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    const counts = seen.map((text) => /^Overall (\d+) \/ 30 .* · (\d+) succeeded · (\d+) failed.* \| (\d+)$/.exec(text)).filter((m) => m !== null);
    expect(counts.length).toBeGreaterThan(5); // seen mid-run, not only at the end
    expect(counts.some((m) => Number(m[1]) > 0 && Number(m[1]) < 30)).toBe(true);
    for (const [text, done, succeeded, failed, attempts] of counts) {
      expect(Number(succeeded) + Number(failed), text).toBe(Number(done));
      expect(Number(done), text).toBeLessThanOrEqual(Number(attempts));
    }
  });

  it("pages the jobs list", async () => {
    const { key } = await newTenant(base());
    const ids: string[] = [];
    for (const i of [0, 1, 2]) {
      const res = await call(base(), "POST", "/v1/map?wait=true", {
        token: key,
        body: { inputs: [i], prompt_template: "{{ item }}", model: "openai/gpt-6-luna" },
      });
      ids.push(res.body.job_id);
    }
    const page = await signedIn(key, "/?limit=2");
    const listed = () => page.locator("table.jobs tbody tr td:first-child").allTextContents();
    await expect.poll(listed).toEqual([ids[2], ids[1]]);
    await page.getByRole("link", { name: "Older →" }).click();
    await expect.poll(listed).toEqual([ids[0]]);
    expect(await page.getByRole("link", { name: "Older →" }).count()).toBe(0);
    await page.getByRole("link", { name: "← Newest" }).click();
    await expect.poll(listed).toEqual([ids[2], ids[1]]);
  });

  it("reconnects a dropped event stream with Last-Event-ID and still ends at 100 %", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-sse");
    const created = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { inputs: [0, 1, 2].map((i) => ({ d: fake(tag, i, "ok", 600) })), prompt_template: "{{ item.d }}", model: "openai/gpt-6-luna", concurrency: 1 },
    });
    const page = await browser().newPage();
    const asked: (string | null)[] = [];
    await page.route("**/v1/jobs/*/events", async (route) => {
      asked.push(route.request().headers()["last-event-id"] ?? null);
      if (asked.length > 1) return route.continue();
      // The first connection delivers the job's first event, then drops.
      const real = await fetch(`${base()}/v1/jobs/${created.body.job_id}/events`, { headers: { authorization: `Bearer ${key}` } });
      const reader = (real.body as ReadableStream<Uint8Array>).getReader();
      let text = "";
      const firstEvent = () => text.indexOf("\n\n", text.indexOf("id: 1\n"));
      while (!text.includes("id: 1\n") || firstEvent() === -1) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      await route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: text.slice(0, firstEvent() + 2) });
    });
    await page.goto(`${base()}/jobs/${created.body.job_id}`);
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => overall(page).textContent(), { timeout: 30_000 }).toContain("3 / 3 (100 %)");
    await expect.poll(() => asked.length).toBeGreaterThanOrEqual(2); // a loaded machine may finish the job before the reconnect's back-off is over
    expect(asked.slice(0, 2)).toEqual([null, "1"]);
    await expect.poll(() => page.locator("#results tbody tr").count()).toBe(3); // the results table refreshes after the bar
  });

  it("shows the token budget, and resumes a job paused on it", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-budget");
    const body = {
      inputs: [0, 1, 2].map((i) => ({ d: fake(tag, i, "bad,ok") })),
      prompt_template: "{{ item.d }}",
      output_schema: ECHO_SCHEMA,
      model: "openai/gpt-6-luna",
      max_tokens: 20,
      concurrency: 1,
      max_retries: 1,
    };
    const total = (await call(base(), "POST", "/v1/map?dry_run=true", { token: key, body })).body.estimate.total_tokens;
    const created = await call(base(), "POST", "/v1/map", { token: key, body: { ...body, token_budget: { total } } });
    const page = await signedIn(key, `/jobs/${created.body.job_id}`);
    await expect.poll(() => page.locator(".job-id .badge").textContent(), { timeout: 30_000 }).toBe("paused");
    expect(await page.locator(".budget").textContent()).toContain(`/ ${total.toLocaleString("en-US")}`);
    // A total the job has spent already: refused, and the message is drawn. The field and the
    // button are the same elements after that redraw (drawn again, a press and its release could
    // land on two buttons — the click lost — and the field would lose its focus).
    const field = page.getByLabel("New token budget");
    await field.evaluate((el) => (el.dataset.mark = "typed here"));
    await field.fill("1");
    await page.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Resume failed");
    expect(await field.evaluate((el) => el.dataset.mark)).toBe("typed here");
    await field.fill(String(total * 10));
    await page.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => page.locator(".job-id .badge").textContent(), { timeout: 30_000 }).toBe("completed");
    expect(await overall(page).textContent()).toContain("3 succeeded · 0 failed");
  });

  it("reads inputs from an uploaded CSV file", async () => {
    const { key } = await newTenant(base());
    const page = await signedIn(key, "/new");
    await page
      .getByLabel("Upload inputs")
      .setInputFiles({ name: "papers.csv", mimeType: "text/csv", buffer: Buffer.from('title,year\n"Attention, all",2017\n"Say ""hi""",2020\n') });
    await expect.poll(() => page.locator("#form-status").textContent()).toContain("Read 2 inputs from papers.csv");
    expect((await page.getByLabel("Inputs", { exact: true }).inputValue()).split("\n").map((l) => JSON.parse(l))).toEqual([
      { title: "Attention, all", year: "2017" },
      { title: 'Say "hi"', year: "2020" },
    ]);
    await page.getByRole("button", { name: "Estimate" }).click();
    await expect.poll(() => page.locator("#estimate-result").textContent()).toContain("2 calls");
    // A bad template is the API's 400, shown next to the form.
    await page.getByLabel("Prompt template").fill("{{ item | random }}");
    await page.getByRole("button", { name: "Estimate" }).click();
    await expect.poll(() => page.locator("#form-status").textContent()).toContain("random");
  });

  it("cancels a running job", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-cancel");
    const created = await call(base(), "POST", "/v1/map", {
      token: key,
      body: {
        inputs: [0, 1, 2, 3, 4, 5].map((i) => ({ d: fake(tag, i, "ok", 1_500) })),
        prompt_template: "{{ item.d }}",
        model: "openai/gpt-6-luna",
        concurrency: 1,
      },
    });
    const page = await signedIn(key, `/jobs/${created.body.job_id}`);
    const streams: number[] = [];
    page.on("request", (r) => {
      if (r.url().endsWith("/events")) streams.push(Date.now());
    });
    await expect.poll(() => page.locator("#stream-state").textContent()).toBe("live"); // it followed the running job
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => page.locator(".job-id .badge").textContent(), { timeout: 20_000 }).toBe("cancelled");
    await page.getByRole("button", { name: /Recover/ }).waitFor(); // a cancelled job can go on
    // The stream ends and stays ended: it used to follow again past the end and retry every 0.5 s until the tab closed.
    await expect.poll(() => page.locator("#stream-state").textContent()).toBe("stream ended");
    const afterEnd = streams.length;
    await new Promise((r) => setTimeout(r, 2_000));
    expect(streams.length).toBe(afterEnd);
    expect(afterEnd).toBeLessThanOrEqual(3); // the first stream, and at most one follow after the action
    await page.close();
  });

  it("never shows a job of failures as a green completion: its badge says all failed, its bar is red", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-allfail");
    const body = (steps: string[]) => ({
      inputs: steps.map((s, i) => ({ d: fake(tag, i, s) })),
      prompt_template: "{{ item.d }}",
      model: "openai/gpt-6-luna",
      max_retries: 0,
    });
    const failed = await call(base(), "POST", "/v1/map?wait=true", { token: key, body: body(["401", "401"]) });
    const mixed = await call(base(), "POST", "/v1/map?wait=true", { token: key, body: body(["ok", "401"]) });
    const page = await signedIn(key, `/jobs/${failed.body.job_id}`);
    await expect.poll(() => page.locator(".job-id .badge").textContent()).toBe("completed · all failed");
    expect(await page.locator(".job-id .badge").getAttribute("class")).toContain("badge-failed");
    expect(await overall(page).locator("progress").getAttribute("class")).toBe("bar-failed");
    await page.goto(`${base()}/jobs/${mixed.body.job_id}`);
    await expect.poll(() => page.locator(".job-id .badge").textContent()).toBe("completed · 1 failed");
    await page.goto(`${base()}/`);
    await expect.poll(() => page.locator("table.jobs .badge").allTextContents()).toEqual(["completed · 1 failed", "completed · all failed"]);
    await page.close();
  });
});
