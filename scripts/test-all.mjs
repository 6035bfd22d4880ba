#!/usr/bin/env node
/**
 * `npm test`: every phase, in order, each run even when an earlier one failed — typecheck and lint
 * (side by side), the Worker's build, unit, integration, the client's build, e2e — then one line a
 * phase with its result and time, and an exit code that is non-zero if any failed. (Chained with
 * `&&`, a failure in an early phase hid whether the later ones passed.)
 */
import { spawn } from "node:child_process";

const PHASES = [
  ["typecheck and lint", 'node scripts/parallel.mjs "npm run typecheck" "npm run lint"'],
  ["build", "npm run build"],
  ["unit", "npm run test:unit"],
  ["integration", "npm run test:integration"],
  ["client build", "npm run build:client"],
  ["e2e", "npm run test:e2e"],
];

function run(command) {
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: "inherit" });
    child.on("close", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const results = [];
for (const [name, command] of PHASES) {
  const started = Date.now();
  process.stdout.write(`\n=== ${name}: ${command}\n`);
  const code = await run(command);
  results.push({ name, code, secs: Math.round((Date.now() - started) / 1000) });
}
process.stdout.write("\n=== npm test, by phase\n");
for (const r of results) process.stdout.write(`${r.code === 0 ? "passed" : `FAILED (exit ${r.code})`}  ${r.name}  ${r.secs} s\n`);
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
