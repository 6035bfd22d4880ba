/**
 * Blocking for entity resolution: which pairs of items are worth a model's comparison. Each item's
 * key is its `keys` fields' values (dotted paths), trimmed, lower-cased, spaces collapsed, joined
 * by a space; an item with none of them has no key and is compared with nothing.
 * - `exact`: the same key.
 * - `prefix`: the same first `threshold` characters (an integer, default 4).
 * - `trigram`: the keys' sets of character trigrams overlap by at least `threshold` (Jaccard, 0–1,
 *   default 0.5); candidates come from an index of trigrams, not from every pair. A key counts its
 *   first MAX_TRIGRAM_KEY_CHARS characters, and the keys' trigrams are counted before any set is
 *   made: over MAX_TRIGRAMS in all, the blocking is refused (`over`, `trigrams`) having built nothing.
 * The pairs are counted as they are found and the count stops at `limit` + 1: a blocking over its
 * bound costs no more than the bound to refuse. Pairs are `[a, b]` with a < b, in order.
 */
export type BlockingMethod = "exact" | "prefix" | "trigram" | "embedding"; // embedding: ../embedding-blocking (no pairs here)

export interface Blocking {
  keys: string[];
  method: BlockingMethod;
  threshold: number | null;
}

export const DEFAULT_PREFIX = 4;
export const DEFAULT_TRIGRAM = 0.5;
/** Posting-list work a trigram blocking may do (candidate pairs looked at) before it is refused. */
export const MAX_TRIGRAM_WORK = 5_000_000;
/** The characters of a key a trigram blocking reads (a name, an address: far more than enough to tell records apart). */
export const MAX_TRIGRAM_KEY_CHARS = 1_000;
/** The trigrams of all the keys together a blocking may index (~20–40 MB as numbers): counted before any is made. */
export const MAX_TRIGRAMS = 1_000_000;

function valueAt(item: unknown, path: string): unknown {
  let value = item;
  for (const part of path.split(".")) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

export function blockingKey(item: unknown, keys: string[]): string | null {
  const parts: string[] = [];
  for (const key of keys) {
    const value = valueAt(item, key);
    if (value === undefined || value === null) continue;
    const text = (typeof value === "string" ? value : JSON.stringify(value)).trim().toLowerCase().replace(/\s+/g, " ");
    if (text !== "") parts.push(text);
  }
  return parts.length > 0 ? parts.join(" ") : null;
}

/** A key's trigrams, each as one number (three UTF-16 code units: 48 bits), not as strings. */
export function trigrams(key: string): Set<number> {
  const padded = `  ${key} `;
  const out = new Set<number>();
  for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.charCodeAt(i) * 2 ** 32 + padded.charCodeAt(i + 1) * 2 ** 16 + padded.charCodeAt(i + 2));
  return out;
}

/** How many trigrams a key of `length` characters has at most (its padded length less two). */
export const trigramCount = (length: number): number => length + 1;

function push<K>(map: Map<K, number[]>, key: K, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** `trigrams`: the keys' trigrams in all, when a trigram blocking counted more than MAX_TRIGRAMS (and built nothing). */
export type Pairs = { pairs: [number, number][]; over: boolean; work: number; trigrams?: number };

/** The pairs the blocking compares, at most `limit` (then `over`). */
export function blockPairs(items: unknown[], blocking: Blocking, limit: number): Pairs {
  if (blocking.method === "embedding") throw new Error("an embedding blocking's pairs are found as the job runs (../embedding-blocking)");
  const keys = items.map((item) => blockingKey(item, blocking.keys));
  const pairs: [number, number][] = [];
  const add = (a: number, b: number): boolean => {
    pairs.push(a < b ? [a, b] : [b, a]);
    return pairs.length > limit;
  };
  if (blocking.method === "trigram") return trigramPairs(keys, blocking.threshold ?? DEFAULT_TRIGRAM, limit);
  const width = blocking.method === "prefix" ? Math.max(1, Math.floor(blocking.threshold ?? DEFAULT_PREFIX)) : null;
  const blocks = new Map<string, number[]>();
  keys.forEach((key, index) => {
    if (key === null) return;
    const block = width === null ? key : key.slice(0, width);
    push(blocks, block, index);
  });
  for (const members of blocks.values()) {
    for (let i = 0; i < members.length; i++) {
      for (let j = i + 1; j < members.length; j++) if (add(members[i] as number, members[j] as number)) return { pairs, over: true, work: pairs.length };
    }
  }
  return { pairs: pairs.sort((x, y) => x[0] - y[0] || x[1] - y[1]), over: false, work: pairs.length };
}

function trigramPairs(fullKeys: (string | null)[], threshold: number, limit: number): Pairs {
  const keys = fullKeys.map((key) => (key === null ? null : key.slice(0, MAX_TRIGRAM_KEY_CHARS)));
  const total = keys.reduce((n, key) => n + (key === null ? 0 : trigramCount(key.length)), 0);
  if (total > MAX_TRIGRAMS) return { pairs: [], over: true, work: 0, trigrams: total };
  const sets = keys.map((key) => (key === null ? null : trigrams(key)));
  const index = new Map<number, number[]>();
  sets.forEach((set, i) => set?.forEach((t) => push(index, t, i)));
  const pairs: [number, number][] = [];
  const counter = { work: 0 };
  for (let a = 0; a < sets.length; a++) {
    const mine = sets[a];
    if (!mine) continue;
    const similar = similarTo(mine, sets, index, threshold, a, counter); // later items only
    if (similar === null) return { pairs, over: true, work: counter.work };
    for (const b of similar) {
      pairs.push([a, b]);
      if (pairs.length > limit) return { pairs, over: true, work: counter.work };
    }
  }
  return { pairs, over: false, work: counter.work };
}

/**
 * The items of `sets` (found through their trigrams' `index`) past `after` whose trigrams overlap
 * `mine` by at least `threshold` (Jaccard), by index. The candidates looked at are added to
 * `counter.work`; null once it passes MAX_TRIGRAM_WORK.
 */
export function similarTo(
  mine: Set<number>,
  sets: (Set<number> | null)[],
  index: Map<number, number[]>,
  threshold: number,
  after: number,
  counter: { work: number },
): number[] | null {
  const shared = new Map<number, number>(); // candidates and how many trigrams they share with mine
  for (const t of mine) {
    for (const b of index.get(t) ?? []) {
      if (b <= after) continue;
      counter.work++;
      shared.set(b, (shared.get(b) ?? 0) + 1);
    }
    if (counter.work > MAX_TRIGRAM_WORK) return null;
  }
  const out: number[] = [];
  for (const [b, common] of [...shared].sort((x, y) => x[0] - y[0])) {
    const other = sets[b] as Set<number>;
    if (common / (mine.size + other.size - common) >= threshold) out.push(b);
  }
  return out;
}
