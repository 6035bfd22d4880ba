/**
 * Nesting depth and widest container of JSON text, found by one iterative scan (no recursion, so no input can
 * overflow the stack here). Used on request bodies before they are parsed and on model outputs
 * before they are validated: everything after that (canonical JSON, schema walking, template
 * values) recurses, and is safe once depth is bounded.
 */
export const MAX_JSON_DEPTH = 64; // real documents nest a handful of levels; recursion is safe far deeper

/** The nesting depth of JSON text, by jsonShape's scan; past MAX_JSON_DEPTH it stops there (the depth is then MAX_JSON_DEPTH + 1). */
export function jsonDepth(text: string): number {
  return jsonShape(text, MAX_JSON_DEPTH, Number.POSITIVE_INFINITY).depth;
}

/**
 * Members a body's array or object may hold: above MAX_ITEMS_PER_JOB's greatest setting, and
 * above what fits an item's 256 KB. Checked before the parse, so a 10-million-element array or
 * a 2-million-key object is refused in one linear scan instead of parsed and validated (seconds).
 */
export const MAX_JSON_MEMBERS = 100_000;

export interface JsonShape {
  depth: number;
  /** The most members of one array or object. */
  widest: number;
}

/** Depth and widest container of JSON text; stops early once either is over its bound. */
export function jsonShape(text: string, maxDepth = MAX_JSON_DEPTH, maxMembers = MAX_JSON_MEMBERS): JsonShape {
  const members: number[] = []; // per open container: separators seen, +1 once it holds a value
  let deepest = 0;
  let widest = 0;
  let inString = false;
  let filled = false; // the innermost open container holds at least one value
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92)
        i++; // backslash: skip the escaped character
      else if (ch === 34) inString = false;
      continue;
    }
    if (ch === 32 || ch === 10 || ch === 13 || ch === 9) continue;
    if (ch === 123 || ch === 91) {
      members.push(0);
      filled = false;
      deepest = Math.max(deepest, members.length);
      if (deepest > maxDepth) break;
      continue;
    }
    if (ch === 125 || ch === 93) {
      const count = (members.pop() ?? 0) + (filled ? 1 : 0);
      widest = Math.max(widest, count);
      filled = true; // the closed container is a value of its parent
      continue;
    }
    if (ch === 44 && members.length > 0) {
      const count = (members[members.length - 1] as number) + 1;
      members[members.length - 1] = count;
      widest = Math.max(widest, count + 1);
      if (widest > maxMembers) break;
      continue;
    }
    if (ch === 34) inString = true;
    filled = true;
  }
  return { depth: deepest, widest };
}

/**
 * The first number literal of JSON text whose magnitude is past what a double holds (JSON.parse
 * would make it Infinity, and JSON.stringify then null: `1e309` silently becomes null), or null.
 * One scan, outside strings: a number's decimal exponent is its integer digits (less leading
 * zeros) plus its exponent part.
 */
export function overflowingNumber(text: string): string | null {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92) i++;
      else if (ch === 34) inString = false;
      continue;
    }
    if (ch === 34) {
      inString = true;
      continue;
    }
    if (ch !== 45 && (ch < 48 || ch > 57)) continue;
    const start = i;
    if (ch === 45) i++;
    while (i < text.length && text.charCodeAt(i) === 48) i++; // leading zeros
    let digits = 0;
    for (; i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57; i++) digits++;
    if (text.charCodeAt(i) === 46) for (i++; i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57;) i++;
    let exponent = 0;
    if (text.charCodeAt(i) === 101 || text.charCodeAt(i) === 69) {
      i++;
      const sign = text.charCodeAt(i) === 45 ? -1 : 1;
      if (text.charCodeAt(i) === 45 || text.charCodeAt(i) === 43) i++;
      let e = 0;
      while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) e = Math.min(1e6, e * 10 + (text.charCodeAt(i++) - 48));
      exponent = sign * e;
    }
    if (digits > 0 && digits - 1 + exponent >= 308 && !Number.isFinite(Number(text.slice(start, i)))) return text.slice(start, Math.min(i, start + 40));
    i--; // the loop's i++ moves past the number
  }
  return null;
}
