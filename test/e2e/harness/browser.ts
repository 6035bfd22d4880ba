/**
 * Real Chromium for the dashboard tests: Debian's package (/usr/bin/chromium), driven by
 * playwright-core (which downloads no browser). Where it is missing, the test set-up installs it
 * with apt-get (root, Debian's registry), as the README says.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { afterAll, beforeAll } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

function aptGet(args: string[]): { ok: boolean; output: string } {
  const run = spawnSync("apt-get", args, { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, encoding: "utf8", timeout: 600_000 });
  return { ok: run.status === 0, output: `${run.stdout ?? ""}${run.stderr ?? ""}${run.error ? String(run.error) : ""}` };
}

export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  let install = aptGet(["install", "-y", "--no-install-recommends", "chromium"]);
  if (!install.ok) {
    aptGet(["update"]); // a fresh machine's package lists may be empty or stale
    install = aptGet(["install", "-y", "--no-install-recommends", "chromium"]);
  }
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not at ${CHROMIUM} and could not be installed (apt-get install chromium, as root):\n${install.output.slice(-2000)}`);
  }
  return CHROMIUM;
}

/** Headless, with the flags that keep Chromium off the network it would otherwise call at start. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** One Chromium for a test file: launched before its tests (a first run may install it), closed after them. */
export function fileBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error("the file's browser is not launched yet");
    return browser;
  };
}

/** A tab of the dashboard at `base` + `path`, signed in with `key` (it lives in the tab's sessionStorage); its console errors and page errors go to `problems`. */
export async function signedInPage(
  browser: Browser,
  base: string,
  key: string,
  path: string,
  viewport: { width: number; height: number },
  problems: string[],
): Promise<Page> {
  const page = await browser.newPage({ viewport });
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));
  await page.goto(`${base}${path}`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#sign-in").waitFor({ state: "hidden" });
  return page;
}
