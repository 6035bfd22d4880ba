/**
 * Which (left, right) pairs a join judges (POST /v1/join): every pair without a blocking, else the
 * pairs whose blocking keys agree as resolve's do (../resolve/blocking.ts: exact, prefix, trigram)
 * — across the two lists only, never within one. Counted as they are found, stopping at `limit` + 1
 * (all pairs: counted without building them); a trigram blocking indexes the right list's keys
 * (MAX_TRIGRAMS in all, counted first) and looks at MAX_TRIGRAM_WORK candidates at most. Pairs are
 * `[left, right]`, by left then right.
 */
import {
  blockingKey,
  DEFAULT_PREFIX,
  DEFAULT_TRIGRAM,
  MAX_TRIGRAM_KEY_CHARS,
  MAX_TRIGRAMS,
  similarTo,
  trigramCount,
  trigrams,
  type Blocking,
  type Pairs,
} from "../resolve/blocking";

/** The pairs grouped by left item: each left index with its right indices, in the pairs' order. */
export function byLeftOf(pairs: [number, number][]): Map<number, number[]> {
  const byLeft = new Map<number, number[]>();
  for (const [l, r] of pairs) {
    const list = byLeft.get(l);
    if (list) list.push(r);
    else byLeft.set(l, [r]);
  }
  return byLeft;
}

export function crossPairs(left: unknown[], right: unknown[], blocking: Blocking | null, limit: number): Pairs {
  if (!blocking) {
    const count = left.length * right.length;
    if (count > limit) return { pairs: [], over: true, work: count };
    return { pairs: left.flatMap((_, l) => right.map((_, r) => [l, r] as [number, number])), over: false, work: count };
  }
  const leftKeys = left.map((item) => blockingKey(item, blocking.keys));
  const rightKeys = right.map((item) => blockingKey(item, blocking.keys));
  if (blocking.method === "trigram") return trigramCross(leftKeys, rightKeys, blocking.threshold ?? DEFAULT_TRIGRAM, limit);
  const width = blocking.method === "prefix" ? Math.max(1, Math.floor(blocking.threshold ?? DEFAULT_PREFIX)) : null;
  const block = (key: string) => (width === null ? key : key.slice(0, width));
  const byBlock = new Map<string, number[]>();
  rightKeys.forEach((key, r) => {
    if (key === null) return;
    const list = byBlock.get(block(key));
    if (list) list.push(r);
    else byBlock.set(block(key), [r]);
  });
  const pairs: [number, number][] = [];
  for (let l = 0; l < leftKeys.length; l++) {
    const key = leftKeys[l];
    if (key === null || key === undefined) continue;
    for (const r of byBlock.get(block(key)) ?? []) {
      pairs.push([l, r]);
      if (pairs.length > limit) return { pairs, over: true, work: pairs.length };
    }
  }
  return { pairs, over: false, work: pairs.length };
}

function trigramCross(leftFull: (string | null)[], rightFull: (string | null)[], threshold: number, limit: number): Pairs {
  const cut = (key: string | null) => (key === null ? null : key.slice(0, MAX_TRIGRAM_KEY_CHARS));
  const [leftKeys, rightKeys] = [leftFull.map(cut), rightFull.map(cut)];
  const total = [...leftKeys, ...rightKeys].reduce((n, key) => n + (key === null ? 0 : trigramCount(key.length)), 0);
  if (total > MAX_TRIGRAMS) return { pairs: [], over: true, work: 0, trigrams: total };
  const rightSets = rightKeys.map((key) => (key === null ? null : trigrams(key)));
  const index = new Map<number, number[]>();
  rightSets.forEach((set, r) =>
    set?.forEach((t) => {
      const list = index.get(t);
      if (list) list.push(r);
      else index.set(t, [r]);
    }),
  );
  const pairs: [number, number][] = [];
  const counter = { work: 0 };
  for (let l = 0; l < leftKeys.length; l++) {
    const key = leftKeys[l];
    if (key === null || key === undefined) continue;
    const similar = similarTo(trigrams(key), rightSets, index, threshold, -1, counter); // every right item
    if (similar === null) return { pairs, over: true, work: counter.work };
    for (const r of similar) {
      pairs.push([l, r]);
      if (pairs.length > limit) return { pairs, over: true, work: counter.work };
    }
  }
  return { pairs, over: false, work: counter.work };
}
