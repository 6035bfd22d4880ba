/**
 * `npm start -- --fake-llm` as a newcomer runs it: one short banner (no migrations table, no
 * bindings table, no DNS errors), and the banner's next command works as printed.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, ROOT } from "./harness/fanout-server.ts";
import { removeTempDirs, tempDir } from "./harness/temp-dir.ts";

let child: ChildProcess | undefined;
afterAll(() => {
  if (child?.pid && child.exitCode === null) process.kill(-child.pid, "SIGTERM"); // npm, wrangler and workerd: one process group
  removeTempDirs();
});

describe("npm start", () => {
  it("prints one banner with the URLs, a demo key and a next command that works as printed", async () => {
    const [port, inspector] = [await freePort(), await freePort()];
    const state = tempDir("fanout-start-");
    child = spawn(
      "npm",
      ["start", "--", "--fake-llm", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector), "--persist-to", state],
      {
        cwd: ROOT,
        env: { ...process.env, CI: "true", NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      },
    );
    let out = "";
    child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
    // Until the banner's last line, or until npm start stops (its output then says why).
    const started = child;
    const deadline = Date.now() + 90_000;
    while (!/^Next:\n.*\n.*curl .*\n/m.test(out) && started.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(out).toMatch(/^Next:\n.*\n.*curl .*\n/m);

    const base = `http://127.0.0.1:${port}`;
    expect(out).toContain(`database: ${readdirSync(join(ROOT, "migrations")).filter((f) => f.endsWith(".sql")).length} migrations applied`);
    expect(out).toContain(`  API        ${base}    (reference: ${base}/docs`);
    expect(out).toContain(`  Dashboard  ${base}/`);
    expect(out).toMatch(/^ {2}Demo key {3}fo_\w+ {3}\(tenant "demo"/m);
    expect(out).not.toMatch(/Migrations to be applied|Binding|getaddrinfo|ERROR|Error:/);
    expect(out.trim().split("\n").length).toBeLessThan(20);

    const next = out
      .slice(out.indexOf("Next:\n") + 6)
      .split("\n")
      .slice(0, 2)
      .join("\n");
    const run = spawnSync("sh", ["-c", next], { encoding: "utf8", cwd: join(ROOT, "..") });
    const batch = JSON.parse(run.stdout);
    expect(batch).toMatchObject({ total: 2, failures: [] });
    // No output_schema: each output is the model's text (the fake model's is JSON).
    expect(batch.successes.map((r: { output: string }) => JSON.parse(r.output).echo)).toEqual([
      "Extract metadata from: Attention Is All You Need",
      "Extract metadata from: Deep Residual Learning",
    ]);
  }, 150_000);
});
