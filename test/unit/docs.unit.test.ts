/** The hand-written docs name every event the coordinator emits (the generated ones are checked by `npm run typecheck`). */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");

describe("docs", () => {
  it("list every event name the coordinator emits", () => {
    const sources = readdirSync(join(root, "durable-objects")).filter((f) => f.endsWith(".ts")).map((f) => readFileSync(join(root, "durable-objects", f), "utf8"));
    const emitted = new Set(sources.flatMap((s) => [...s.matchAll(/#emit\("([A-Z_]+)"/g)].map((m) => m[1] as string)));
    expect(emitted.size).toBeGreaterThan(5);
    const doc = readFileSync(join(root, "docs/events-and-webhooks.md"), "utf8");
    for (const name of emitted) expect(doc, name).toContain(`| \`${name}\` |`);
  });

  it("refer to no file outside the repository", () => {
    for (const file of readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md"))) expect(readFileSync(join(root, "docs", file), "utf8")).not.toMatch(/\]\(\.\.\/\.\.\//);
    expect(readFileSync(join(root, "README.md"), "utf8")).not.toMatch(/\.\.\/shared/);
  });

  it("link only files that exist (the dashboard's screenshots included)", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const links = [...readme.matchAll(/\]\(((?:docs|clients|test|bench)\/[^)#\s]+)/g)].map((m) => m[1] as string);
    expect(links).toContain("docs/screenshots/job.png");
    for (const link of links) expect(existsSync(join(root, link)), link).toBe(true);
  });
});
