/**
 * The dashboard in real Chromium (Debian's, driven by playwright-core) against `wrangler dev` and
 * the fake model: a wrong key is refused; sign in, estimate and submit a job from the form, watch
 * the bar reach 100 % with the right counts, see a failure and re-run it, download the results;
 * the jobs list and its filter; cancel; an agent's session; a map-reduce audit tree; the CSP.
 * With FANOUT_SCREENSHOTS=update the job page and the jobs list are saved as the README's
 * screenshots (docs/screenshots/); otherwise into a temporary folder.
 */
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { call, fake, newTenant } from "./harness/api.ts";
import { base, uniqueTag } from "./harness/context.ts";
import { ROOT } from "./harness/fanout-server.ts";
import { launchBrowser } from "./harness/browser.ts";

const SHOTS = process.env.FANOUT_SCREENSHOTS === "update" ? join(ROOT, "docs/screenshots") : mkdtempSync(join(tmpdir(), "fanout-shots-"));
mkdirSync(SHOTS, { recursive: true });

let browser: Browser;
const problems: string[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
}, 600_000); // a first run may install Chromium

afterAll(async () => {
  await browser?.close();
});

/** A tab signed in with `key` (the key lives in this tab's sessionStorage). */
async function signedIn(key: string, path = "/"): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));
  await page.goto(`${base()}${path}`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#sign-in").waitFor({ state: "hidden" });
  return page;
}

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

    const page = await browser.newPage();
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
    await page.getByRole("button", { name: "Estimate" }).click();
    await expect.poll(() => page.locator("#estimate-result").textContent()).toContain("5 calls");
    await page.getByRole("button", { name: "Start job" }).click();
    await page.waitForURL(/\/jobs\/job_/);

    await expect.poll(() => overall(page).textContent(), { timeout: 30_000 }).toContain("5 / 5 (100 %)");
    await expect.poll(() => overall(page).textContent()).toContain("4 succeeded · 1 failed");
    expect(await page.locator("#overall progress").getAttribute("value")).toBe("5");
    const failure = page.locator('#failures tr[data-kind="llm_error"]');
    await expect.poll(() => failure.textContent()).toContain("#4");
    expect(await page.locator("#results tbody tr").count()).toBe(5);
    await page.screenshot({ path: join(SHOTS, "job.png"), fullPage: true });

    await page.getByRole("button", { name: /Recover/ }).click();
    await expect.poll(() => overall(page).textContent(), { timeout: 30_000 }).toContain("5 succeeded · 0 failed");
    await page.locator("#no-failures").waitFor();

    await page.getByRole("button", { name: "Details" }).first().click();
    await expect.poll(() => page.locator("dialog pre").textContent()).toContain('"success": true');
    await page.keyboard.press("Escape");

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download results (JSONL)" }).click()]);
    const rows = readFileSync((await download.path()) as string, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.index, r.success])).toEqual([0, 1, 2, 3, 4].map((i) => [i, true]));

    // The jobs list: newest first, with its status; the filter keeps only that status.
    const slow = { inputs: [0, 1, 2, 3].map((i) => ({ d: fake(tag, `s${i}`, "ok", 2_000) })), prompt_template: "{{ item.d }}", model: "openai/gpt-4o-mini", concurrency: 1 };
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

    // On a phone: nothing wider than the screen.
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(`${base()}/`);
    await page.locator("table.jobs").waitFor();
    expect(await page.evaluate(() => document.body.scrollWidth)).toBeLessThanOrEqual(375);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("#sign-in").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(problems).toEqual([]); // no CSP violation, no script error
  });

  it("cancels a running job", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-cancel");
    const created = await call(base(), "POST", "/v1/map", {
      token: key,
      body: { inputs: [0, 1, 2, 3, 4, 5].map((i) => ({ d: fake(tag, i, "ok", 1_500) })), prompt_template: "{{ item.d }}", model: "openai/gpt-4o-mini", concurrency: 1 },
    });
    const page = await signedIn(key, `/jobs/${created.body.job_id}`);
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => page.locator(".job-id .badge").textContent(), { timeout: 20_000 }).toBe("cancelled");
    await page.getByRole("button", { name: /Recover/ }).waitFor(); // a cancelled job can go on
  });

  it("links an agent's result to its session: the conversation with its tool calls", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-agent");
    const created = await call(base(), "POST", "/v1/agentic-map", {
      token: key,
      body: { inputs: [{ task: "Investigate the item", d: fake(tag, 0, "text:All_done_here") }], agent_prompt_template: "{{ item.task }} {{ item.d }}", model: "openai/gpt-4o-mini" },
    });
    const page = await signedIn(key, `/jobs/${created.body.job_id}`);
    await expect.poll(() => overall(page).textContent(), { timeout: 30_000 }).toContain("1 / 1 (100 %)");
    await page.getByRole("link", { name: "Session" }).click();
    await page.waitForURL(/\/sessions\/ses_/);
    const messages = page.locator("#messages");
    await expect.poll(() => messages.textContent()).toContain("Investigate the item");
    expect(await messages.textContent()).toContain("All done here");
    expect(await page.locator(".message-assistant").count()).toBe(1);
  });

  it("shows a map-reduce job's stages and its audit tree", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-mr");
    const extractions = (name: string) => encodeURIComponent(JSON.stringify([{ category: "a", name }]));
    const created = await call(base(), "POST", "/v1/map-reduce", {
      token: key,
      body: {
        inputs: [0, 1, 2, 3].map((i) => `doc ${i} <<fake tag=${tag} id=m${i} steps=json:${extractions(`n${i}`)}>>`),
        model: "openai/gpt-4o-mini",
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
});
