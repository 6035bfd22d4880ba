/**
 * `npm run deploy` (scripts/deploy.mjs): its dry run builds the bundle and changes nothing; against
 * an account with nothing on it (a stand-in wrangler that records its calls) it creates the D1
 * database and writes its id into the config, creates both queues, applies the migrations, sets
 * both secrets, saves the admin token once (mode 600), deploys, and prints the URL and next steps.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const script = join(root, "scripts/deploy.mjs");

describe("npm run deploy", () => {
  it("--dry-run: the plan and a local build of the bundle; wrangler.toml and the working tree unchanged", () => {
    const before = readFileSync(join(root, "wrangler.toml"), "utf8");
    const run = spawnSync(process.execPath, [script, "--dry-run"], { cwd: root, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
    expect(run.status, run.stderr).toBe(0);
    for (const planned of [
      "wrangler d1 create fanout",
      "wrangler queues create fanout-tasks",
      "wrangler queues create fanout-dlq",
      "wrangler d1 migrations apply DB --remote",
      "wrangler secret put ENCRYPTION_KEY",
      "wrangler secret put ADMIN_TOKEN",
      "wrangler deploy",
      "the bundle builds",
    ]) {
      expect(run.stdout).toContain(planned);
    }
    expect(run.stdout).toMatch(/next: create a tenant and its first API key/);
    expect(readFileSync(join(root, "wrangler.toml"), "utf8")).toBe(before);
  });

  it("on an empty account: creates what is missing, writes the database id, saves the admin token once, deploys", () => {
    const dir = mkdtempSync(join(tmpdir(), "fanout-deploy-"));
    copyFileSync(join(root, "wrangler.toml"), join(dir, "wrangler.toml"));
    const log = join(dir, "calls.jsonl");
    const env = { ...process.env, FANOUT_WRANGLER: `${process.execPath} ${join(root, "test/e2e/harness/fake-wrangler.mjs")}`, FAKE_WRANGLER_LOG: log };
    const run = spawnSync(process.execPath, [script, "--config", join(dir, "wrangler.toml")], { cwd: dir, encoding: "utf8", env });
    expect(run.status, run.stderr).toBe(0);
    const calls = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { args: string[]; stdin: string });
    expect(calls.map((c) => c.args.join(" "))).toEqual([
      "whoami",
      "d1 list --json",
      "d1 create fanout",
      "queues list",
      "queues create fanout-tasks",
      "queues create fanout-dlq",
      "d1 migrations apply DB --remote",
      "secret list --format json",
      "secret put ENCRYPTION_KEY",
      "secret put ADMIN_TOKEN",
      "deploy",
    ]);
    expect(readFileSync(join(dir, "wrangler.toml"), "utf8")).toMatch(/database_id = "6d1c5e2a-8f3b-4c1d-9e2a-0b1c2d3e4f50"/);
    expect(Buffer.from(calls[8]?.stdin ?? "", "base64")).toHaveLength(32); // ENCRYPTION_KEY: 32 random bytes, base64
    const token = calls[9]?.stdin ?? "";
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(dir, ".fanout-admin-token"), "utf8").trim()).toBe(token);
    expect(statSync(join(dir, ".fanout-admin-token")).mode & 0o777).toBe(0o600);
    expect(run.stdout).toContain(`admin token (shown once, saved to .fanout-admin-token): ${token}`);
    expect(run.stdout).toContain("API:       https://fanout.example.workers.dev");
    expect(run.stdout).toContain("curl -s -X POST https://fanout.example.workers.dev/v1/admin/tenants");
  });
});
