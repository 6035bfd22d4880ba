/** The guide's client example (docs/clients.md), extracted and run as written against the test server. */
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newTenant } from "./harness/api.ts";
import { base } from "./harness/context.ts";
import { ROOT } from "./harness/fanout-server.ts";
import { exampleText } from "./harness/readme.ts";

describe("the README's client example", () => {
  it("runs as written", async () => {
    const { key } = await newTenant(base());
    const file = join(ROOT, `.readme-example-${process.pid}.ts`); // inside the repo, so @fanout/client resolves
    writeFileSync(file, exampleText("client", "ts"));
    try {
      const run = await new Promise<{ code: number; out: string }>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", file], { cwd: ROOT, env: { ...process.env, FANOUT_API_KEY: key, FANOUT_URL: base() } });
        let out = "";
        child.stdout.on("data", (d: Buffer) => (out += d.toString()));
        child.stderr.on("data", (d: Buffer) => (out += d.toString()));
        child.on("exit", (code) => resolve({ code: code ?? -1, out }));
      });
      expect(run.out).not.toMatch(/Failed \(/);
      expect(run.code).toBe(0);
      expect(run.out.match(/^Title: /gm)).toHaveLength(3);
      expect(run.out).toMatch(/^job job_\w+ completed: 3\/3$/m);
      expect(run.out).toContain("3 succeeded, 0 failed");
      expect(run.out).toContain("Total attempts across all items: 3");
      expect(run.out.match(/: ses_\w+, 5 turns, \d+ tokens$/gm)).toHaveLength(2); // continuation until max_turns
    } finally {
      rmSync(file, { force: true });
    }
  });
});
