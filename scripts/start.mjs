#!/usr/bin/env node
// `npm start [-- --port 9000] [--var NAME:VALUE …] [--fake-llm]`
// Applies the D1 migrations locally, then serves the API with `wrangler dev`. Every argument but
// --fake-llm passes through to wrangler dev. --fake-llm also starts the fake model server (the
// offline demo) and points the openai and anthropic providers at it.
import { spawn, spawnSync } from "node:child_process";

const args = process.argv.slice(2);
const fake = args.includes("--fake-llm");
const passthrough = args.filter((a) => a !== "--fake-llm");
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", X_LOCAL_OBSERVABILITY: "false" };

const persistAt = passthrough.indexOf("--persist-to");
const persist = persistAt >= 0 ? ["--persist-to", passthrough[persistAt + 1]] : [];
const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local", ...persist], {
  stdio: "inherit",
  env: { ...env, CI: "true" }, // no interactive confirmation
});
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const extra = [];
let fakeServer;
if (fake) {
  const { startFakeModelServer } = await import("../test/fake-model/server.ts");
  fakeServer = await startFakeModelServer({ port: Number(process.env.FAKE_LLM_PORT ?? 0), latencyMs: 200 });
  console.log(`fake model server on ${fakeServer.url}`);
  extra.push(
    "--var", `OPENAI_BASE_URL:${fakeServer.url}/v1`, "--var", "OPENAI_API_KEY:sk-fake",
    "--var", `ANTHROPIC_BASE_URL:${fakeServer.url}`, "--var", "ANTHROPIC_API_KEY:sk-ant-fake",
  );
}

if (!passthrough.some((a, i) => a === "--var" && passthrough[i + 1]?.startsWith("ENVIRONMENT:"))) {
  extra.push("--var", "ENVIRONMENT:development"); // local defaults on; wrangler.toml says production
}
const dev = spawn("npx", ["wrangler", "dev", ...extra, ...passthrough], { stdio: "inherit", env });
const stop = () => dev.kill("SIGTERM");
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
dev.on("exit", (code) => {
  void fakeServer?.close();
  process.exit(code ?? 0);
});
