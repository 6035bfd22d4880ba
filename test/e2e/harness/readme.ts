/** The README's examples, read as written (`<!-- example: NAME -->` before a fenced block). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./fanout-server.ts";

export function exampleText(name: string, language = "json"): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const marker = `<!-- example: ${name} -->\n\`\`\`${language}\n`;
  const start = readme.indexOf(marker);
  if (start < 0) throw new Error(`README has no example "${name}"`);
  return readme.slice(start + marker.length, readme.indexOf("```", start + marker.length));
}

export const example = (name: string) => JSON.parse(exampleText(name)) as Record<string, unknown>;
