/**
 * Turns a model's text into a JSON value: strip a code fence (```json … ```), parse, and if prose
 * surrounds a JSON object or array, extract the first balanced one that parses.
 */
import { jsonDepth, MAX_JSON_DEPTH } from "../lib/json-depth";

export type ExtractResult = { ok: true; value: unknown } | { ok: false; error: string };

// Each candidate costs a scan to its balanced end: a few keep a hostile "[[[[…" output linear.
const MAX_CANDIDATES = 8;

const FENCE = /```[a-zA-Z0-9_-]*[ \t]*\r?\n?([\s\S]*?)\r?\n?```/;

export function stripCodeFence(text: string): string {
  const match = text.match(FENCE);
  return match?.[1] !== undefined ? match[1].trim() : text.trim();
}

function tryParse(text: string): ExtractResult {
  try {
    if (jsonDepth(text) > MAX_JSON_DEPTH) return { ok: false, error: `the JSON nests deeper than ${MAX_JSON_DEPTH} levels` };
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** The end index (exclusive) of the balanced {…} or […] starting at `start`, or -1. */
function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") stack.push(ch === "{" ? "}" : "]");
    else if (ch === "}" || ch === "]") {
      if (stack.pop() !== ch) return -1;
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
}

export function extractJson(text: string): ExtractResult {
  const body = stripCodeFence(text);
  const direct = tryParse(body);
  if (direct.ok) return direct;
  let candidates = 0;
  for (let i = 0; i < body.length && candidates < MAX_CANDIDATES; i++) {
    const ch = body[i];
    if (ch !== "{" && ch !== "[") continue;
    candidates++;
    const end = balancedEnd(body, i);
    if (end === -1) continue;
    const candidate = tryParse(body.slice(i, end));
    if (candidate.ok) return candidate;
  }
  return { ok: false, error: `The response is not valid JSON (${direct.error}).` };
}
