/**
 * Nesting depth of JSON text, found by one iterative scan (no recursion, so no input can
 * overflow the stack here). Used on request bodies before they are parsed and on model outputs
 * before they are validated: everything after that (canonical JSON, schema walking, template
 * values) recurses, and is safe once depth is bounded.
 */
export const MAX_JSON_DEPTH = 64; // real documents nest a handful of levels; recursion is safe far deeper

export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92) i++; // backslash: skip the escaped character
      else if (ch === 34) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123 || ch === 91) deepest = Math.max(deepest, ++depth);
    else if (ch === 125 || ch === 93) depth--;
  }
  return deepest;
}
