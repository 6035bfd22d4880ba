#!/usr/bin/env node
/**
 * A stand-in for wrangler in the deploy script's test (test/e2e/deploy-script.e2e.test.ts): it
 * appends each call (and any stdin) to $FAKE_WRANGLER_LOG and answers as wrangler does for an
 * account with nothing on it yet.
 */
import { appendFileSync, readFileSync } from "node:fs";

const args = process.argv.slice(2).filter((a, i, all) => a !== "--config" && all[i - 1] !== "--config");
const stdin = args[0] === "secret" && args[1] === "put" ? readFileSync(0, "utf8") : "";
appendFileSync(process.env.FAKE_WRANGLER_LOG, `${JSON.stringify({ args, stdin })}\n`);
const out = (text) => process.stdout.write(text);
const key = args.slice(0, 2).join(" ");
if (args[0] === "whoami") out("You are logged in with an API Token, associated with the email dev@example.com.\n");
else if (key === "d1 list") out("[]\n");
else if (key === "d1 create")
  out(
    'Successfully created DB \'fanout\'\n{\n  "d1_databases": [\n    {\n      "binding": "DB",\n      "database_name": "fanout",\n      "database_id": "6d1c5e2a-8f3b-4c1d-9e2a-0b1c2d3e4f50"\n    }\n  ]\n}\n',
  );
else if (key === "queues list") out("┌──┐\n│ id │ name │\n└──┘\n");
else if (key === "queues create") out(`Created queue ${args[2]}.\n`);
else if (key === "d1 migrations") out("Migrations to be applied: 11\n");
else if (key === "secret list") out("[]\n");
else if (key === "secret put") out("✨ Success! Uploaded secret\n");
else if (args[0] === "deploy") out("Uploaded fanout\nDeployed fanout triggers\n  https://fanout.example.workers.dev\n");
else {
  process.stderr.write(`fake wrangler: unexpected ${args.join(" ")}\n`);
  process.exit(2);
}
