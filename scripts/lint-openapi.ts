/**
 * Lints the server's OpenAPI document (the one GET /openapi.json serves) with Redocly's
 * recommended rules, warnings as errors (redocly.yaml). Run by `npm run lint`, so by `npm test`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../src/app";
import { openApiDocument } from "../src/routes/meta";

const dir = mkdtempSync(join(tmpdir(), "fanout-openapi-"));
const file = join(dir, "openapi.json");
writeFileSync(file, JSON.stringify(openApiDocument(buildApp()), null, 2));
const run = spawnSync("redocly", ["lint", file, "--config", "redocly.yaml", "--format", "stylish"], {
  stdio: "inherit",
  env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
});
rmSync(dir, { recursive: true, force: true });
process.exit(run.status ?? 1);
