#!/usr/bin/env node
/**
 * `npm run deploy`: Fanout on your Cloudflare account in one command (docs/deploy.md). It creates
 * what is missing — the D1 database (its id written into wrangler.toml), the two queues, the
 * ENCRYPTION_KEY and ADMIN_TOKEN secrets — applies the D1 migrations, deploys, and prints the URL,
 * the dashboard and the next command. A new admin token is printed once and saved to
 * `.fanout-admin-token` (mode 600, ignored by git): it is the only way to create the first tenant.
 * Run again, it changes only what is missing (upgrades: migrations, then the new code).
 *
 *   npm run deploy                 # needs `npx wrangler login` first
 *   npm run deploy -- --dry-run    # the plan, and a local build of the bundle; nothing is created
 *
 * FANOUT_WRANGLER names the wrangler command (default `npx wrangler`); --config another wrangler.toml.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";

const args = process.argv.slice(2);
const dryRun = args.includes("--dry-run");
const configAt = args.indexOf("--config");
const config = configAt >= 0 ? args[configAt + 1] : "wrangler.toml";
const wrangler = (process.env.FANOUT_WRANGLER ?? "npx wrangler").split(" ");
const TOKEN_FILE = ".fanout-admin-token";
const PLACEHOLDER_ID = "00000000-0000-0000-0000-000000000000";
const QUEUES = ["fanout-tasks", "fanout-dlq"];

const say = (line) => process.stdout.write(`${line}\n`);
const step = (line) => say(`\n▸ ${line}`);

/** Runs wrangler with `argv` (stdin: `input`); its output, or the script stops with wrangler's own words. */
function run(argv, { input, quiet = false } = {}) {
  const [command, ...first] = wrangler;
  const result = spawnSync(command, [...first, ...argv, "--config", config], {
    input,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ""}${result.stderr ?? ""}`);
    throw new Error(`wrangler ${argv.join(" ")} failed (exit ${result.status ?? result.signal})`);
  }
  if (!quiet) process.stdout.write(result.stdout.replace(/^/gm, "  "));
  return result.stdout;
}

/** In a dry run: what would be run; otherwise run it. */
function act(argv, options) {
  if (dryRun) return void say(`  would run: wrangler ${argv.join(" ")}${options?.input ? " (value from stdin)" : ""}`);
  return run(argv, options);
}

function databaseId(toml) {
  const block = /\[\[d1_databases\]\][\s\S]*?database_id\s*=\s*"([^"]*)"/.exec(toml);
  return block?.[1] ?? null;
}

async function main() {
  say(`Fanout deploy${dryRun ? " (dry run: nothing is created)" : ""}, config ${config}`);
  const toml = readFileSync(config, "utf8");

  step("Cloudflare account");
  if (dryRun) say("  would check `wrangler whoami` (the account needs Workers Paid: Durable Objects with SQLite, Queues, D1)");
  else run(["whoami"]);

  step("D1 database `fanout`");
  const known = databaseId(toml);
  if (known && known !== PLACEHOLDER_ID) say(`  wrangler.toml names database ${known}: kept`);
  else if (dryRun) say("  would run: wrangler d1 create fanout, and write its database_id into wrangler.toml");
  else {
    const listed = JSON.parse(run(["d1", "list", "--json"], { quiet: true }) || "[]");
    const existing = listed.find((d) => d.name === "fanout");
    const id = existing?.uuid ?? /"?database_id"?\s*[:=]\s*"([0-9a-f-]{36})"/.exec(run(["d1", "create", "fanout"]))?.[1];
    if (!id) throw new Error("wrangler d1 create printed no database_id");
    writeFileSync(config, toml.replace(/(\[\[d1_databases\]\][\s\S]*?database_id\s*=\s*")[^"]*(")/, `$1${id}$2`));
    say(`  ${existing ? "found" : "created"} database ${id}; wrangler.toml now names it (commit that change)`);
  }

  step(`Queues ${QUEUES.join(", ")}`);
  const queues = dryRun ? "" : run(["queues", "list"], { quiet: true });
  for (const queue of QUEUES) {
    if (!dryRun && new RegExp(`\\b${queue}\\b`).test(queues)) say(`  ${queue}: exists`);
    else act(["queues", "create", queue]);
  }

  step("D1 migrations");
  act(["d1", "migrations", "apply", "DB", "--remote"]);

  step("Secrets ENCRYPTION_KEY and ADMIN_TOKEN");
  const secrets = dryRun ? [] : JSON.parse(run(["secret", "list", "--format", "json"], { quiet: true }) || "[]").map((s) => s.name);
  let adminToken = null;
  if (secrets.includes("ENCRYPTION_KEY")) say("  ENCRYPTION_KEY: set (kept: changing it makes stored provider keys unreadable)");
  else act(["secret", "put", "ENCRYPTION_KEY"], { input: randomBytes(32).toString("base64") });
  if (secrets.includes("ADMIN_TOKEN")) say(`  ADMIN_TOKEN: set (kept; ${TOKEN_FILE} holds it if this script made it)`);
  else {
    adminToken = randomBytes(32).toString("hex");
    act(["secret", "put", "ADMIN_TOKEN"], { input: adminToken });
    if (!dryRun) {
      writeFileSync(TOKEN_FILE, `${adminToken}\n`, { mode: 0o600 });
      chmodSync(TOKEN_FILE, 0o600);
    }
  }

  step("Deploy");
  let url = "https://fanout.<your-subdomain>.workers.dev";
  if (dryRun) {
    say("  would run: wrangler deploy");
    run(["deploy", "--dry-run", "--outdir", ".wrangler/dist"], { quiet: true });
    say("  the bundle builds (wrangler deploy --dry-run)");
  } else url = /https:\/\/[\w.-]+\.workers\.dev/.exec(run(["deploy"]))?.[0] ?? url;

  step("Done");
  say(`  API:       ${url}`);
  say(`  dashboard: ${url}/ (sign in with an API key)`);
  if (adminToken && !dryRun) say(`  admin token (shown once, saved to ${TOKEN_FILE}): ${adminToken}`);
  say("  next: create a tenant and its first API key:");
  say(`    ADMIN="Authorization: Bearer $(cat ${TOKEN_FILE})"`);
  say(`    curl -s -X POST ${url}/v1/admin/tenants -H "$ADMIN" -H 'content-type: application/json' -d '{"name": "my-team"}'`);
  say(`    curl -s -X POST ${url}/v1/admin/tenants/<tenant id>/keys -H "$ADMIN" -H 'content-type: application/json' -d '{"name": "laptop"}'`);
  say("  and a provider key for the deployment: npx wrangler secret put OPENAI_API_KEY (or each tenant's own: PUT /v1/providers/openai)");
}

main().catch((err) => {
  process.stderr.write(`npm run deploy: ${err.message}\n`);
  process.exit(1);
});
