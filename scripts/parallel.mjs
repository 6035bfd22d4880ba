#!/usr/bin/env node
/**
 * Runs shell commands side by side, as many at once as the machine has cores, and fails if any
 * fails: `node scripts/parallel.mjs "tsc -p ." "tsc -p test"`. Each command's output is printed
 * in one piece when it ends (never interleaved), under the command.
 */
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";

const commands = process.argv.slice(2);
const width = Math.max(1, Math.min(availableParallelism(), commands.length));
let next = 0;
let failed = 0;

function run(command) {
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("close", (code) => {
      process.stdout.write(`> ${command}${code === 0 ? "" : `  (exit ${code})`}\n${output}`);
      if (code !== 0) failed++;
      resolve();
    });
  });
}

async function lane() {
  while (next < commands.length) await run(commands[next++]);
}

await Promise.all(Array.from({ length: width }, lane));
process.exit(failed === 0 ? 0 : 1);
