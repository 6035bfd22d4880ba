/** The hand-written docs name every event the coordinator emits (the generated ones are checked by `npm run typecheck`). */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");

describe("docs", () => {
  it("list every event name the coordinator emits", () => {
    const dir = join(root, "durable-objects");
    const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const sources = [...files.map((f) => readFileSync(join(dir, f), "utf8")), readFileSync(join(root, "src/engine/job-machine.ts"), "utf8")];
    // Emitted by name, named by the event shapes (coordinator/event-shapes.ts: a finished task's event), or by the job machine's `emit` effects.
    const emitted = new Set(
      sources.flatMap((s) =>
        [...s.matchAll(/(?:#emit|\.emit|\.emitWithResult)\("([A-Z_]+)"|\bname: "([A-Z_]+)"|\bevent: "([A-Z_]+)"/g)].map(
          (m) => (m[1] ?? m[2] ?? m[3]) as string,
        ),
      ),
    );
    for (const name of ["MAP_ITEM_COMPLETED", "TASK_COMPLETED", "SUBTASK_COMPLETED", "STAGE_COMPLETED", "MAP_COMPLETED"]) expect(emitted).toContain(name);
    expect(emitted.size).toBeGreaterThan(5);
    const doc = readFileSync(join(root, "docs/events-and-webhooks.md"), "utf8");
    for (const name of emitted) expect(doc, name).toContain(`| \`${name}\` |`);
  });

  it("refer to no file outside the repository", () => {
    for (const file of readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")))
      expect(readFileSync(join(root, "docs", file), "utf8")).not.toMatch(/\]\(\.\.\/\.\.\//);
    expect(readFileSync(join(root, "README.md"), "utf8")).not.toMatch(/\.\.\/shared/);
  });

  it("link only files that exist (the dashboard's screenshots included)", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const links = [...readme.matchAll(/\]\(((?:docs|clients|test|bench)\/[^)#\s]+)/g)].map((m) => m[1] as string);
    expect(links).toContain("docs/screenshots/job.png");
    for (const link of links) expect(existsSync(join(root, link)), link).toBe(true);
    // The guide's pages: every relative link resolves from docs/.
    for (const file of readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md"))) {
      const text = readFileSync(join(root, "docs", file), "utf8");
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue;
        expect(existsSync(join(root, "docs", target as string)), `${file}: ${target}`).toBe(true);
      }
    }
  });

  it("keep the README a front page: short, the offline demo and every operator's example in its first screens", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThan(260);
    const firstScreens = readme.split("\n").slice(0, 160).join("\n");
    expect(firstScreens).toContain("npm start -- --fake-llm");
    for (const operator of ["map", "agentic-map", "reduce", "map-reduce", "pipelines", "filter", "classify", "rank", "resolve", "embed", "join"])
      expect(firstScreens).toContain(`$BASE/v1/${operator}?wait=true`);
  });
});
