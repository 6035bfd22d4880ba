/**
 * The dashboard on a phone (390 px) and a desktop (1280 px), the remembered key, and the New-job
 * form for every operator, in real Chromium against `wrangler dev` and the fake model (split from
 * ./dashboard.e2e.test.ts, which holds the rest of the dashboard's tests).
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { call, newTenant, waitForJob } from "./harness/api.ts";
import { base, scriptedMap, uniqueTag } from "./harness/context.ts";
import { fileBrowser, signedInPage } from "./harness/browser.ts";

const browser = fileBrowser();
const problems: string[] = [];

const signedIn = (key: string, path = "/", viewport = { width: 1280, height: 900 }): Promise<Page> =>
  signedInPage(browser(), base(), key, path, viewport, problems);

/** Whether the element is on screen horizontally: inside the viewport's width, nothing to scroll sideways for. */
async function onScreen(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).first().boundingBox();
  const width = page.viewportSize()?.width ?? 0;
  return box !== null && box.width > 0 && box.x >= 0 && box.x + box.width <= width + 0.5;
}

describe("the dashboard on a phone and a desktop", () => {
  it("at 390 px the jobs list and the results are cards: status, progress, output and error on screen; at 1280 px, tables", async () => {
    const { key } = await newTenant(base());
    const tag = uniqueTag("dash-phone");
    const created = await call(base(), "POST", "/v1/map", { token: key, body: { ...scriptedMap(tag, ["ok", "401"]), max_retries: 0, name: "Phone check" } });
    const job = await waitForJob(base(), key, created.body.job_id);
    expect(job).toMatchObject({ succeeded: 1, failed: 1 });

    const phone = await signedIn(key, "/", { width: 390, height: 844 });
    await phone.locator("table.jobs tbody tr").first().waitFor();
    expect(await phone.locator("table.jobs tbody tr").first().textContent()).toContain("Phone check"); // the name, not only the id
    for (const cell of [
      "table.jobs tbody .badge",
      "table.jobs tbody progress",
      "table.jobs tbody td[data-label='Status']",
      "table.jobs tbody td[data-label='Progress']",
    ]) {
      // Polled: the page draws a section again as events come in, and a cell measured as it is replaced has no box.
      await expect.poll(() => onScreen(phone, cell), { message: cell }).toBe(true);
    }
    await expect.poll(() => phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390); // nothing off to the side

    await phone.goto(`${base()}/jobs/${job.id}`);
    await phone.locator("#results tbody tr").nth(1).waitFor();
    for (const cell of [
      "#results td[data-label='Output']",
      "#results td[data-label='Error']",
      "#results td.row-actions button",
      "#failures td[data-label='First error']",
    ]) {
      // Polled: the page draws a section again as events come in, and a cell measured as it is replaced has no box.
      await expect.poll(() => onScreen(phone, cell), { message: cell }).toBe(true);
    }
    expect(await phone.locator("#results td[data-label='Error']").filter({ hasText: "llm_error" }).count()).toBe(1);
    await expect.poll(() => phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await phone.close();

    const desktop = await signedIn(key, `/jobs/${job.id}`);
    await desktop.locator("#results tbody tr").nth(1).waitFor();
    expect(await desktop.locator("#results thead").isVisible()).toBe(true); // a table with its headings
    expect(await desktop.locator("#results thead th").nth(3).textContent()).toBe("Output");
    expect(await desktop.locator("#overall meter.bar-failures").getAttribute("value")).toBe("1"); // the failed part, apart from the bar
    await desktop.close();
  });

  it("remembers the key on this device only when asked: a new tab is signed in with the box ticked, and asks again without it", async () => {
    const { key } = await newTenant(base());
    for (const remember of [true, false]) {
      const context = await browser().newContext();
      const first = await context.newPage();
      await first.goto(`${base()}/`);
      await first.getByLabel("API key").fill(key);
      if (remember) await first.getByLabel("Remember this key on this device").check();
      await first.getByRole("button", { name: "Sign in" }).click();
      await first.locator("#sign-in").waitFor({ state: "hidden" });
      const second = await context.newPage();
      await second.goto(`${base()}/`);
      await second
        .locator(remember ? "table.jobs, #view p" : "#sign-in")
        .first()
        .waitFor();
      expect(await second.locator("#sign-in").isVisible(), `remember: ${remember}`).toBe(!remember);
      if (remember) {
        await second.getByRole("button", { name: "Sign out" }).click(); // forgets it on the device too
        const third = await context.newPage();
        await third.goto(`${base()}/`);
        await third.locator("#sign-in").waitFor();
      }
      await context.close();
    }
  });
});

describe("the New-job form, every operator", () => {
  it("starts a classify job from the operator's example fields: the estimate, then the job to its end", async () => {
    const { key } = await newTenant(base());
    const page = await signedIn(key, "/new");
    await page.getByLabel("Operator", { exact: true }).selectOption("classify");
    expect(await page.locator("#map-fields").isHidden()).toBe(true);
    expect(JSON.parse(await page.getByLabel("The operator's fields (JSON)").inputValue())).toHaveProperty("categories");
    await page.getByLabel("Inputs", { exact: true }).fill(['"The battery died after two days."', '"Does it come in blue?"'].join("\n"));
    await page.getByLabel("Name (optional)").fill("Two tickets");
    await page.getByRole("button", { name: "Estimate" }).click();
    await expect.poll(() => page.locator("#estimate-result").textContent()).toContain("2 calls");
    await page.getByRole("button", { name: "Start job" }).click();
    await page.waitForURL(/\/jobs\/job_/);
    const jobId = page.url().split("/jobs/")[1] as string;
    const job = await waitForJob(base(), key, decodeURIComponent(jobId));
    expect(job).toMatchObject({ type: "classify", name: "Two tickets", status: "completed", succeeded: 2 });
    await page.close();
  });

  it.each(["filter", "rank", "resolve", "join", "embed", "reduce", "pipelines", "map-reduce", "agentic-map"])(
    "%s: its example fields with the form's inputs estimate without an error",
    async (name) => {
      const { key } = await newTenant(base());
      const page = await signedIn(key, "/new");
      await page.getByLabel("Operator", { exact: true }).selectOption(name);
      const inputs =
        name === "map-reduce"
          ? ['"Revenue grew 12%."', '"Churn fell to 3%."', '"Two regions opened."', '"Margins held."']
          : name === "resolve" || name === "join"
            ? ['{"name": "Acme Inc"}', '{"name": "ACME Incorporated"}', '{"name": "Globex"}']
            : ['"Longformer"', '"ResNet"', '"Transformer-XL"'];
      await page.getByLabel("Inputs", { exact: true }).fill(inputs.join("\n"));
      await page.getByRole("button", { name: "Estimate" }).click();
      await expect.poll(() => page.locator("#form-status").textContent()).toMatch(/Estimate: [\d,]+ calls/);
      await page.close();
    },
  );
});

describe("the pages above", () => {
  it("logged no script error and no CSP violation", () => {
    expect(problems).toEqual([]);
  });
});
