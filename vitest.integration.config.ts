import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { readFileSync } from "node:fs";
import { defineConfig, type Plugin } from "vitest/config";
import { startModelTarpit } from "./test/integration/model-tarpit.ts";
import { startWebhookSink } from "./test/integration/webhook-sink.ts";

/**
 * Dependencies bundled into the test worker whose source maps name files their packages do not
 * ship (the MCP SDK, standardwebhooks): read without their sourceMappingURL, so a passing run does
 * not print a warning per file. Our own files keep theirs.
 */
const dependencySourceMapsOff: Plugin = {
  name: "dependency-source-maps-off",
  enforce: "pre",
  load(id) {
    if (!id.includes("/node_modules/") || !/\.[cm]?js$/.test(id)) return null;
    const code = readFileSync(id.split("?")[0] as string, "utf8");
    return code.includes("sourceMappingURL") ? { code: code.replace(/^\/\/# sourceMappingURL=.*$/gm, ""), map: null } : null;
  },
};

const webhookSink = await startWebhookSink();
const modelTarpit = await startModelTarpit();

export default defineConfig({
  plugins: [
    dependencySourceMapsOff,
    cloudflareTest(async () => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        d1Databases: ["MIGRATION_DB"],
        bindings: {
          ENVIRONMENT: "development",
          ALLOW_HTTP_WEBHOOKS: "false",
          ALLOW_PRIVATE_DESTINATIONS: "false",
          DESTINATION_ALLOWLIST: `${new URL(webhookSink).host},${new URL(modelTarpit).host}`,
          TEST_WEBHOOK_SINK: webhookSink,
          TEST_MODEL_TARPIT: modelTarpit,
          WEBHOOK_RETRY_SCHEDULE_SECS: "3600",
          TEST_MIGRATIONS: await readD1Migrations("./migrations"),
          MAX_REQUEST_BYTES: "65536",
          MAX_ITEM_BYTES: "1000",
          MAX_ITEMS_PER_JOB: "5",
          MAX_ACTIVE_JOBS_PER_TENANT: "2",
          OPENAI_COMPATIBLE_BASE_URL: modelTarpit,
          PRICES: JSON.stringify({ "openai-compatible/priced": { input: 100_000, output: 100_000 } }),
        },
      },
    })),
  ],
  test: {
    name: "integration",
    include: ["test/integration/**/*.integration.test.ts", "test/hostile/**/*.integration.test.ts"],
    setupFiles: ["./test/integration/apply-migrations.ts"],
    // Two workers, on CI's two cores too (vitest's default there is one), each one workerd that runs
    // file after file: a workerd and the worker's modules per file took ~10 s of setup each (150 s
    // in all, 25 s now). The files share storage: each makes tenants and jobs of its own.
    maxWorkers: 2,
    isolate: false,
    // The coordinator's line for bench:pacing (its round trips to the pacer) is not the tests' output.
    onConsoleLog: (log) => !log.includes("rate pacer asks"),
  },
});
