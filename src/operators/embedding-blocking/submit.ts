/**
 * An embedding blocking from its request (resolve's, a join's `blocking` with method `embedding`):
 * the model must embed, the threshold is a cosine, the items at most MAX_EMBEDDING_ITEMS (each
 * placement reads a bounded number of them, but the pairs are chosen from all their lists at once
 * when the last is placed), and the comparisons' bound within `max_comparisons`.
 */
import { ApiError, invalidRequest } from "../../lib/errors";
import type { ResolveRequest } from "../resolve/schema";
import type { TaskDefaults } from "../task-call";
import { embeddingCall } from "../embed/submit";
import { rowsFor } from "./lsh";
import { comparisonBound, type EmbeddingBlocking } from "./stages";

export const DEFAULT_COSINE = 0.85;
export const DEFAULT_TOP_K = 10;
/** The most items one embedding blocking places (resolve's records, a join's left and right together). */
export const MAX_EMBEDDING_ITEMS = 10_000;

/** The blocking's call and bounds; `cross`: a join's (the left list against the right), else resolve's. */
export function embeddingBlocking(env: Env, body: TaskDefaults, blocking: ResolveRequest["blocking"], cross: boolean): EmbeddingBlocking {
  if (!blocking.model) throw invalidRequest("An embedding blocking needs its model.", [{ path: "blocking.model", message: "required with method embedding" }]);
  const threshold = blocking.threshold ?? DEFAULT_COSINE;
  const call = embeddingCall(env, body, {
    model: blocking.model,
    field: "blocking.model",
    template: "{{ item }}",
    templateField: "blocking",
    dimensions: blocking.dimensions ?? null,
    packed: true, // what the blocking compares: one byte a dimension in the job's storage
  });
  return { call, threshold, topK: blocking.top_k ?? DEFAULT_TOP_K, rows: rowsFor(threshold), cross };
}

/**
 * 400 over MAX_EMBEDDING_ITEMS items; 422 `too_many_comparisons` when top_k could compare more
 * pairs than `maxComparisons` (`judged`: the items whose neighbours are judged, a join's left list).
 */
export function checkEmbeddingBlocking(cfg: EmbeddingBlocking, items: number, judged: number, maxComparisons: number, field: string): void {
  if (items > MAX_EMBEDDING_ITEMS) {
    const message = `${items} items; an embedding blocking places at most ${MAX_EMBEDDING_ITEMS.toLocaleString("en-US")}`;
    throw invalidRequest(`Too many items for an embedding blocking: split the job, or block by keys.`, [{ path: field, message }]);
  }
  const bound = comparisonBound(cfg, judged);
  if (bound <= maxComparisons) return;
  const suggestion = "lower blocking.top_k, or raise max_comparisons";
  throw new ApiError(
    422,
    "too_many_comparisons",
    `The embedding blocking may compare up to ${bound} pairs (top_k ${cfg.topK} per item), more than max_comparisons ${maxComparisons}: ${suggestion}.`,
    { details: { comparisons: bound, complete: false, max_comparisons: maxComparisons, suggestion } },
  );
}
