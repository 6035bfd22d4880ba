#!/usr/bin/env node
// The `fanout` command. The published package runs its built CLI (dist/); a clone of the
// repository — where `npm install` builds nothing — runs the TypeScript source through tsx (a
// devDependency there), so the command works right after `npm install` and is never stale.
import { existsSync } from "node:fs";
import { URL } from "node:url";

const source = new URL("../src/cli.ts", import.meta.url);
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import(new URL("../dist/cli.js", import.meta.url).href);
}
