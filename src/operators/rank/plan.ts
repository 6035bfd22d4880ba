/**
 * The rank operator: every item scored in parallel (stage `score`); when the items whose score
 * equals the k-th best's do not all fit in the top k, they are compared pairwise (stage
 * `compare`: every pair once, the lower index shown as A) and ordered by the comparisons they
 * won. The job's output is the top k as `[{index, score}]` (tied items with their `wins`):
 * score, then wins, descending, then input order — the same answers give the same order.
 * A failed score leaves its item out; a failed comparison is a win for neither. More than
 * MAX_TIED items tied at the cut are ordered by input order, without comparisons (at most
 * MAX_TIED·(MAX_TIED−1)/2 = 190 comparison calls a job).
 */
import type { Advance, CallSpec, JobSpecBase, Operator, PlanReader, TaskSeed, TaskView } from "../../engine/types";
import { itemResult } from "../single-stage";

export const SCORE_STAGE = "score";
export const COMPARE_STAGE = "compare";
export const MAX_TIED = 20;

export interface RankJobSpec extends JobSpecBase {
  type: "rank";
  call: CallSpec; // an item's score
  compare: CallSpec; // two tied items' comparison
  k: number;
}

interface Scored {
  index: number;
  score: number;
}

export interface Pair {
  a: number;
  b: number;
  item_a: unknown;
  item_b: unknown;
}

export type RankEntry = Scored & { wins?: number };

const scoreOf = (task: TaskView): number | null => {
  const score = (task.output as { score?: unknown } | null)?.score;
  return task.success && typeof score === "number" && Number.isFinite(score) ? score : null;
};

/** The scored items, best first (input order among equal scores). */
function ranked(reader: PlanReader): Scored[] {
  const scored: Scored[] = [];
  for (const task of reader.done(SCORE_STAGE)) {
    const score = scoreOf(task);
    if (score !== null) scored.push({ index: task.index, score });
  }
  return scored.sort((x, y) => y.score - x.score || x.index - y.index);
}

/** The items tied at the cut when they do not all fit in the top k (none when they do). */
export function tiedAtCut(scored: Scored[], k: number): Scored[] {
  const cut = scored[k - 1];
  if (!cut || scored.length <= k) return [];
  const tied = scored.filter((s) => s.score === cut.score);
  const above = scored.filter((s) => s.score > cut.score).length;
  return above + tied.length > k ? tied : [];
}

/** Every pair of the tied items once, the lower index as A. */
export function pairsOf(tied: Scored[], inputs: (index: number) => unknown): Pair[] {
  const order = tied.map((s) => s.index).sort((x, y) => x - y);
  const pairs: Pair[] = [];
  for (let i = 0; i < order.length; i++) {
    for (let j = i + 1; j < order.length; j++) {
      const [a, b] = [order[i] as number, order[j] as number];
      pairs.push({ a, b, item_a: inputs(a), item_b: inputs(b) });
    }
  }
  return pairs;
}

/** The top k: score, then comparisons won, descending; then input order. */
export function topK(scored: Scored[], k: number, wins: Map<number, number> | null): RankEntry[] {
  const won = (index: number) => wins?.get(index) ?? 0;
  const order = [...scored].sort((x, y) => y.score - x.score || won(y.index) - won(x.index) || x.index - y.index);
  return order.slice(0, k).map((s) => (wins?.has(s.index) ? { index: s.index, score: s.score, wins: won(s.index) } : { index: s.index, score: s.score }));
}

function winsOf(reader: PlanReader, tied: Scored[]): Map<number, number> {
  const wins = new Map(tied.map((s) => [s.index, 0]));
  for (const task of reader.done(COMPARE_STAGE)) {
    const pair = task.input as Pair;
    const winner = (task.output as { winner?: unknown } | null)?.winner;
    if (!task.success) continue;
    const index = winner === "A" ? pair.a : winner === "B" ? pair.b : null;
    if (index !== null && wins.has(index)) wins.set(index, (wins.get(index) ?? 0) + 1);
  }
  return wins;
}

function advance(spec: RankJobSpec, reader: PlanReader): Advance {
  const scores = reader.stage(SCORE_STAGE);
  if (!scores || scores.completed < scores.total) return { ready: [] };
  // Comparisons under way: nothing to decide yet (and no reason to read every score again).
  const compare = reader.stage(COMPARE_STAGE);
  if (reader.extent(COMPARE_STAGE) > 0 && compare && compare.completed < compare.total) return { ready: [] };
  const scored = ranked(reader);
  const tied = tiedAtCut(scored, spec.k);
  const end = (wins: Map<number, number> | null): Advance => ({ ready: [], end: { status: "completed", output: topK(scored, spec.k, wins), error: null } });
  if (tied.length === 0 || tied.length > MAX_TIED) return end(null);
  if (reader.extent(COMPARE_STAGE) === 0) {
    const pairs = pairsOf(tied, (index) => reader.task(SCORE_STAGE, index)?.input);
    const ready: TaskSeed[] = pairs.map((input, index) => ({ stage: COMPARE_STAGE, index, input }));
    return { ready, totals: { [COMPARE_STAGE]: pairs.length } };
  }
  return end(winsOf(reader, tied));
}

export const rankOperator: Operator<RankJobSpec> = {
  v1: false,
  startedFields: { type: "rank" },
  mainStage: () => SCORE_STAGE,
  plan: (_spec, inputs) => ({
    stages: [
      { name: SCORE_STAGE, total: inputs.length },
      { name: COMPARE_STAGE, total: 0 },
    ],
    tasks: inputs.map((input, index) => ({ stage: SCORE_STAGE, index, input })),
  }),
  advance: (spec, reader) => advance(spec, reader),
  work: (spec, stage) => ({ kind: "call", tenantId: spec.tenantId, call: stage === COMPARE_STAGE ? spec.compare : spec.call }),
  batchable: () => true, // the scores, and the pairwise comparisons of the tie at the cut: each its own call
  vars: (_spec, task) => {
    if (task.stage !== COMPARE_STAGE) return { item: task.input };
    const pair = task.input as Pair;
    return { item_a: pair.item_a, item_b: pair.item_b };
  },
  result: (_spec, task, finish) => ({ stage: task.stage, ...itemResult(task, finish) }),
  // Scores that run again may change the tie at the cut: its comparisons are planned anew.
  redoAfter: (_spec, _reader, tasks) => ({ rerun: [], drop: tasks.some((t) => t.stage === SCORE_STAGE) ? [COMPARE_STAGE] : [] }),
  estimateTasks: (_spec, plan) => ({
    tasks: plan.tasks.map((t) => ({ ...t, exact: true })),
    note: `Comparisons of items tied at the cut (at most ${(MAX_TIED * (MAX_TIED - 1)) / 2}) are not counted.`,
  }),
};
