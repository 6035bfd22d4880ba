/**
 * Embedding blocking (contract v4, "Embeddings, joins, embedding blocking"): which pairs are worth
 * a model's judgement, by meaning. Two stages before the judging ones:
 *   embed       one embedding call per item (its key's text, or the whole item), batchable; its
 *               vector kept packed (../../lib/packed-vector.ts: one byte a dimension)
 *   neighbours  the items already embedded whose cosine with it is ≥ the threshold, found through
 *               the LSH buckets it shares with them (./lsh.ts) and filed under its own buckets
 *               (PlanReader `keyed`), finished by the operator
 * Each item is placed in the advance of its own embedding's end, against the items placed before
 * it, so the search is spread over as many invocations as there are items and each does a bounded
 * amount: at most BANDS × BUCKET_READ candidates read and compared, never all pairs. A pair is
 * found by whichever of its two items is placed second. Once every item is placed, each item keeps
 * its `top_k` nearest (a join: each left item its nearest right items) and those pairs are judged.
 * A bucket holding more than BUCKET_READ items lends a newcomer its first BUCKET_READ only: near
 * duplicates beyond them are found through those (clusters close transitively), and a bucket of
 * unrelated items costs no more than the bound.
 */
import type { CallSpec, PlanReader, StagePlan, TaskFinish, TaskResult, TaskSeed, TaskView } from "../../engine/types";
import { blockingKey } from "../resolve/blocking";
import { itemResult } from "../single-stage";
import { packedCosine, unpackVector } from "../../lib/packed-vector";
import { BANDS, bandKeys } from "./lsh";

export const EMBED_STAGE = "embed";
export const NEIGHBOURS_STAGE = "neighbours";
export const BLOCKING_STAGES: readonly string[] = [EMBED_STAGE, NEIGHBOURS_STAGE];

/** The items of one bucket a newcomer is compared with at most (per band). */
export const BUCKET_READ = 16;
/** The neighbours at or over the threshold an item keeps when placed (its top_k are chosen among them and those placed after it). */
export const MAX_NEAR = 64;
/** The characters of an item's text that are embedded (~5,000 tokens: within every embedding model's input). */
export const MAX_EMBED_CHARS = 20_000;

export interface EmbeddingBlocking {
  /** The embedding call (its template reads `item`: the text). */
  call: CallSpec;
  threshold: number;
  topK: number;
  /** Bits per LSH band (./lsh.ts `rowsFor`: from the threshold). */
  rows: number;
  /** A join's: the left list's items against the right's (each embed task says its side and the left list's length); else resolve's, every item against the others. */
  cross: boolean;
}

/** An embed task's input: the text, and a join's side. */
export interface EmbedInput {
  text: string;
  side?: "l" | "r"; // a join's: the item's list
  left?: number; // a join's: the left list's length (the right list's items follow it)
  item?: unknown; // a join's: the record itself (its pairs' tasks carry it)
}

/** A neighbours task's output: the items placed before it at cosine ≥ the threshold, nearest first. */
export interface Placed {
  near: [number, number][];
  failed?: true; // its embedding failed: compared with nothing
}

/** What an item's embedding reads: its `keys`' values joined by spaces (none of them: nothing), or the whole item. */
export function embeddingText(item: unknown, keys: string[] | null): string | null {
  const text = keys ? blockingKey(item, keys) : typeof item === "string" ? item : JSON.stringify(item ?? null);
  return text === null || text.trim() === "" ? null : text.slice(0, MAX_EMBED_CHARS);
}

/** The blocking's stages: every item is placed, those with a text embedded. */
export function blockingStages(texts: (string | null)[]): StagePlan[] {
  const embedded = texts.filter((t) => t !== null).length;
  return BLOCKING_STAGES.map((name) => ({ name, total: name === EMBED_STAGE ? embedded : texts.length }));
}

/** The embed tasks (an item with no text is placed at once with no neighbours: see `startLocal`). */
export function embedSeeds(texts: (string | null)[], items: unknown[] | null, left: number | null): TaskSeed[] {
  return texts.flatMap((text, index) => {
    if (text === null) return [];
    const input: EmbedInput = { text, ...(left === null ? {} : { side: index < left ? "l" : "r", left }), ...(items ? { item: items[index] } : {}) };
    return [{ stage: EMBED_STAGE, index, input }];
  });
}

/** The neighbours tasks of items with no text (no embed task), finished at the start: nothing to embed, no neighbours. */
export function startLocal(reader: PlanReader): (TaskSeed & { output: unknown })[] {
  const total = reader.stage(NEIGHBOURS_STAGE)?.total ?? 0;
  const out: (TaskSeed & { output: unknown })[] = [];
  for (let index = 0; index < total; index++) {
    if (reader.task(EMBED_STAGE, index) || reader.task(NEIGHBOURS_STAGE, index)?.state === "done") continue;
    out.push({ stage: NEIGHBOURS_STAGE, index, input: null, output: { near: [], failed: true } satisfies Placed });
  }
  return out;
}

/** A join's bucket keys are its side's (`l|`, `r|`), and an item looks in the other side's; resolve's are one set. */
const sideOf = (input: EmbedInput): string => (input.side ? `${input.side}|` : "");
const otherSide = (input: EmbedInput): string => (input.side === "l" ? "r|" : input.side === "r" ? "l|" : "");

/** A join's left list's length, as its embed tasks say (null: no item was embedded, so there is no pair). */
export function leftLength(reader: PlanReader): number | null {
  const total = reader.stage(NEIGHBOURS_STAGE)?.total ?? 0;
  for (let index = 0; index < total; index++) {
    const input = reader.task(EMBED_STAGE, index)?.input as EmbedInput | undefined;
    if (input) return input.left ?? null;
  }
  return null;
}

/** An item's embedding ended: it is placed (its neighbours among those placed before it, its buckets filed). */
export function place(cfg: EmbeddingBlocking, reader: PlanReader, embedded: TaskView): (TaskSeed & { output: unknown; keys?: string[] })[] {
  const index = embedded.index;
  const input = embedded.input as EmbedInput;
  if (!embedded.success || typeof embedded.output !== "string") {
    return [{ stage: NEIGHBOURS_STAGE, index, input: null, output: { near: [], failed: true } satisfies Placed }];
  }
  const mine = unpackVector(embedded.output);
  const buckets = bandKeys(mine, cfg.rows);
  const candidates = reader.keyed(
    NEIGHBOURS_STAGE,
    buckets.map((b) => otherSide(input) + b),
    BUCKET_READ,
  );
  const vectors = reader.outputs(
    EMBED_STAGE,
    candidates.filter((c) => c !== index),
  );
  const near: [number, number][] = [];
  for (const [other, theirs] of vectors) {
    if (typeof theirs !== "string") continue;
    const similarity = packedCosine(mine, unpackVector(theirs));
    if (similarity >= cfg.threshold) near.push([other, Math.round(similarity * 10_000) / 10_000]);
  }
  near.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  return [
    { stage: NEIGHBOURS_STAGE, index, input: null, output: { near: near.slice(0, MAX_NEAR) } satisfies Placed, keys: buckets.map((b) => sideOf(input) + b) },
  ];
}

/** The items placed with nothing (their embedding failed, or they had no text): read once, at the job's end. */
export function unembedded(reader: PlanReader): number {
  return reader.done(NEIGHBOURS_STAGE).filter((t) => (t.output as Placed | null)?.failed === true).length;
}

/** Whether every item is placed. */
export function allPlaced(reader: PlanReader): boolean {
  const placed = reader.stage(NEIGHBOURS_STAGE);
  return placed !== undefined && placed.completed >= placed.total;
}

/**
 * The pairs to judge once every item is placed: resolve's, each item's top_k nearest (a pair when
 * it is in either item's), `[a, b]` with a < b; a join's, each left item's top_k nearest right
 * items, `[left, right]` (right counted in its own list). Sorted.
 */
export function blockedPairs(cfg: EmbeddingBlocking, reader: PlanReader): [number, number][] {
  const left = cfg.cross ? (leftLength(reader) ?? 0) : null;
  const lists = new Map<number, [number, number][]>();
  const add = (of: number, other: number, similarity: number) => {
    if (left !== null && of >= left) return; // a join keeps left items' lists only
    const list = lists.get(of);
    if (list) list.push([other, similarity]);
    else lists.set(of, [[other, similarity]]);
  };
  for (const task of reader.done(NEIGHBOURS_STAGE)) {
    const placed = task.output as Placed | null;
    if (!placed || placed.failed) continue;
    for (const [other, similarity] of placed.near) {
      add(task.index, other, similarity);
      add(other, task.index, similarity);
    }
  }
  const chosen = new Set<string>();
  const pairs: [number, number][] = [];
  for (const [of, list] of lists) {
    list.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
    for (const [other] of list.slice(0, cfg.topK)) {
      const pair: [number, number] = left !== null ? [of, other - left] : of < other ? [of, other] : [other, of];
      const key = `${pair[0]},${pair[1]}`;
      if (chosen.has(key)) continue;
      chosen.add(key);
      pairs.push(pair);
    }
  }
  return pairs.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
}

/** The most pairs the blocking can judge: each item's top_k (a join: each left item's, `items` the left list's length). */
export function comparisonBound(cfg: EmbeddingBlocking, items: number): number {
  return items * cfg.topK;
}

/**
 * A blocking stage's task as a result: an embedding's `dimensions` (not its packed vector: the job
 * is not an embed job), a placed item's `neighbours` (`[index, cosine]`, nearest first).
 */
export function blockingResult(task: { stage: string; index: number; input: unknown }, finish: TaskFinish): TaskResult {
  const base = { stage: task.stage, ...itemResult(task, finish), output: null };
  if (task.stage === EMBED_STAGE) return { ...base, dimensions: typeof finish.output === "string" ? unpackVector(finish.output).length : null };
  if (task.stage === NEIGHBOURS_STAGE) return { ...base, neighbours: (finish.output as Placed | null)?.near ?? [] };
  return base;
}

/** The candidates one placement reads and compares at most. */
export const PLACEMENT_READS = BANDS * BUCKET_READ;
