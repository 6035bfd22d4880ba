/**
 * A fresh copy of the repository (what a clone has: no node_modules, nothing built, no local
 * state): `npm install` and then `npx fanout --help`
 * work with nothing built (the bin runs the client's source through tsx), and the client package
 * packs with everything it needs — installed from its tarball alone, its CLI runs from dist/.
 * Installs from npm's cache (`--offline`), which `npm ci` has just filled.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./harness/fanout-server.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function run(cmd: string, args: string[], cwd: string) {
  const result = spawnSync(cmd, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, FANOUT_API_KEY: "fo_test", npm_config_audit: "false", npm_config_fund: "false" },
  });
  return { code: result.status, stdout: result.stdout, out: `${result.stdout}${result.stderr}` };
}

describe("a fresh clone", () => {
  it("has a working `fanout` command right after npm install, and a client package that packs and runs alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fanout-clone-"));
    dirs.push(dir);
    const repo = join(dir, "repo");
    const skipped = new Set(["node_modules", ".git", ".wrangler", ".tmp", "dist"]);
    cpSync(ROOT, repo, { recursive: true, filter: (src) => !skipped.has(src.split("/").at(-1) ?? "") && !src.endsWith(".log") });
    const install = run("npm", ["install", "--offline"], repo);
    expect(install.code, install.out).toBe(0);
    expect(existsSync(join(repo, "client/dist"))).toBe(false); // nothing was built
    const help = run("npx", ["fanout", "--help"], repo);
    expect(help.code, help.out).toBe(0);
    expect(help.out).toContain("fanout pipeline run FILE");

    const packed = run("npm", ["pack", "--json", "--pack-destination", dir], join(repo, "client"));
    expect(packed.code, packed.out).toBe(0);
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as { filename: string; files: { path: string }[] }[];
    const files = info!.files.map((f) => f.path);
    for (const f of ["package.json", "bin/fanout.js", "dist/cli.js", "dist/index.js", "dist/index.d.ts"]) expect(files).toContain(f);
    expect(files.some((f) => f.startsWith("src/"))).toBe(false);

    const user = join(dir, "user");
    execFileSync("mkdir", ["-p", user]);
    const added = run("npm", ["install", "--offline", join(dir, info!.filename)], user);
    expect(added.code, added.out).toBe(0);
    const alone = run("npx", ["fanout", "--help"], user);
    expect(alone.code, alone.out).toBe(0);
    expect(alone.out).toContain("usage:");
  }, 240_000);
});
