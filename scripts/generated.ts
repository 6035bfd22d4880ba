/**
 * Generated files under version control: written by their script, or with `--check` compared
 * (run by `npm run typecheck`), naming the command that brings a stale one up to date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { relative } from "node:path";

export function writeOrCheck(files: [URL, string][], command: string): void {
  let stale = false;
  for (const [url, text] of files) {
    if (!process.argv.includes("--check")) {
      writeFileSync(url, text);
      continue;
    }
    let current = "";
    try {
      current = readFileSync(url, "utf8");
    } catch {
      // missing: out of date
    }
    if (current !== text) {
      console.error(`${relative(process.cwd(), fileURLToPath(url))} is out of date: run \`${command}\``);
      stale = true;
    }
  }
  if (stale) process.exit(1);
}
