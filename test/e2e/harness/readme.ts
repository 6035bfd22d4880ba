/**
 * The README's and the guide's examples, read as written: `<!-- example: NAME -->` before a fenced
 * request body, `<!-- run: NAME -->` before a fenced shell command.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./fanout-server.ts";

/** The README and every page of docs/, one text. */
export function guideText(): string {
  const pages = readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => readFileSync(join(ROOT, "docs", f), "utf8"));
  return [readFileSync(join(ROOT, "README.md"), "utf8"), ...pages].join("\n");
}

function fenced(marker: string, language: string): string {
  const text = guideText();
  const head = `${marker}\n\`\`\`${language}\n`;
  const start = text.indexOf(head);
  if (start < 0) throw new Error(`the README and docs/ have no ${marker}`);
  const from = start + head.length;
  return text.slice(from, text.indexOf("```", from));
}

export const exampleText = (name: string, language = "json") => fenced(`<!-- example: ${name} -->`, language);
export const example = (name: string) => JSON.parse(exampleText(name)) as Record<string, unknown>;

/** Every `<!-- run: NAME -->` shell block of the README and docs/, by name. */
export function runnableCommands(): Map<string, string> {
  return new Map([...guideText().matchAll(/<!-- run: ([^>]+?) -->\n```sh\n([\s\S]*?)```/g)].map((m) => [m[1] as string, m[2] as string]));
}
