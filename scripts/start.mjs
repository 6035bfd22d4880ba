#!/usr/bin/env node
// `npm start [-- --port 9000] [--var NAME:VALUE …] [--fake-llm] [--verbose]`
// Applies the D1 migrations locally, then serves the API with `wrangler dev`, and prints one short
// banner once it answers: the API and dashboard URLs, a demo API key, the next command. Every
// argument but --fake-llm and --verbose passes through to wrangler dev. --fake-llm also starts the
// fake model server (the offline demo) and points the openai and anthropic providers at it.
// --verbose shows wrangler's own start-up output (hidden unless it fails to start).
import { spawn, spawnSync } from "node:child_process";
import { banner, demoKey } from "./start-banner.mjs";

const args = process.argv.slice(2);
const fake = args.includes("--fake-llm");
const verbose = args.includes("--verbose");
const passthrough = args.filter((a) => a !== "--fake-llm" && a !== "--verbose");
// No lookup of Cloudflare's Request.cf data (offline it only prints a DNS error), no metrics.
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", X_LOCAL_OBSERVABILITY: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
const option = (name) => {
  const at = passthrough.indexOf(name);
  return at >= 0 ? passthrough[at + 1] : undefined;
};
const varValue = (name) => passthrough.find((a, i) => passthrough[i - 1] === "--var" && a.startsWith(`${name}:`))?.slice(name.length + 1);

const persistTo = option("--persist-to");
const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local", ...(persistTo ? ["--persist-to", persistTo] : [])], {
  encoding: "utf8",
  env: { ...env, CI: "true" }, // no interactive confirmation
});
if (migrate.status !== 0) {
  process.stderr.write(`${migrate.stdout}${migrate.stderr}\nnpm start: the database migrations failed (above).\n`);
  process.exit(migrate.status ?? 1);
}
const applied = /About to apply (\d+) migration/.exec(migrate.stdout)?.[1];
console.log(applied ? `database: ${applied} migrations applied` : "database: up to date");

const extra = [];
const DEFAULT_FAKE_PORT = 8790;
let fakeServer;
if (fake) {
  const { startFakeModelServer } = await import("../test/fake-model/server.ts");
  // A fixed port by default, so DEMO_TOOLS stays the same across restarts; a free one if it is taken.
  const port = Number(process.env.FAKE_LLM_PORT ?? DEFAULT_FAKE_PORT);
  fakeServer = await startFakeModelServer({ port, latencyMs: 200 }).catch((err) => {
    if (err?.code !== "EADDRINUSE" || process.env.FAKE_LLM_PORT) throw err;
    process.stderr.write(`npm start: port ${port} is taken; the fake model server takes a free one (set FAKE_LLM_PORT to choose)\n`);
    return startFakeModelServer({ port: 0, latencyMs: 200 });
  });
  extra.push(
    "--var",
    `OPENAI_BASE_URL:${fakeServer.url}/v1`,
    "--var",
    "OPENAI_API_KEY:sk-fake",
    "--var",
    `ANTHROPIC_BASE_URL:${fakeServer.url}`,
    "--var",
    "ANTHROPIC_API_KEY:sk-ant-fake",
  );
}
if (varValue("ENVIRONMENT") === undefined) extra.push("--var", "ENVIRONMENT:development"); // local defaults on; wrangler.toml says production

const dev = spawn("npx", ["wrangler", "dev", ...extra, ...passthrough], { stdio: ["inherit", "pipe", "pipe"], env });
let starting = false;
let ready = false;
const held = []; // wrangler's start-up output: shown with --verbose, or if it never becomes ready
const relay = (stream, out) => {
  let partial = "";
  stream.setEncoding("utf8");
  stream.on("data", async (chunk) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (ready || verbose) out.write(`${line}\n`);
      else held.push(line);
      const url = !ready && !starting && /Ready on (http:\/\/[\w.:[\]-]+)/.exec(line)?.[1]; // colours or not
      if (url) {
        starting = true; // its own admin calls' log lines stay held
        const base = url.replace("0.0.0.0", "localhost").replace(/\/$/, "");
        const adminToken = varValue("ADMIN_TOKEN") ?? "fanout-local-admin-token";
        const key = await demoKey(base, adminToken, persistTo ?? ".wrangler/state").catch((err) => {
          process.stderr.write(`npm start: no demo key (${err.message})\n`);
          return null;
        });
        console.log(banner({ base, key, adminToken, fake, demoTools: fakeServer ? `${fakeServer.url}/_demo/tools` : null }));
        ready = true;
      }
    }
  });
};
relay(dev.stdout, process.stdout);
relay(dev.stderr, process.stderr);
const stop = () => dev.kill("SIGTERM");
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
dev.on("exit", (code) => {
  if (!ready && !verbose) process.stderr.write(`${held.join("\n")}\nnpm start: wrangler dev stopped before it was ready (above).\n`);
  void fakeServer?.close();
  process.exit(code ?? 0);
});
