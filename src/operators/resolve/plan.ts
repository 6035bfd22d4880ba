/**
 * The resolve operator (entity resolution): the blocked pairs (./blocking.ts) compared by the
 * model in parallel (stage `compare`), matches closed transitively into clusters, then, with a
 * resolution template, one call per cluster of two or more (stage `resolve`). The job's output
 * is `{clusters: [[indices]], resolved: [one record per cluster] | null, failed}`: every input in
 * exactly one cluster (singletons included), each cluster in input order, clusters by their first
 * index; a singleton's record is the input itself; `failed` counts the comparisons that failed
 * (a failed comparison is no match).
 *
 * With an embedding blocking (../embedding-blocking), the pairs are found as the job runs: the
 * records are embedded and placed first (stages `embed`, `neighbours`), and the
 * comparisons are planned once the last is placed; the output adds `embeddings_failed` (records
 * whose embedding failed: compared with nothing).
 */
import type { Advance, CallSpec, JobSpecBase, Operator, Plan, PlanReader, TaskView } from "../../engine/types";
import { itemResult } from "../single-stage";
import { blockPairs, type Blocking } from "./blocking";
import {
  allPlaced,
  blockedPairs,
  blockingResult,
  unembedded,
  blockingStages,
  BLOCKING_STAGES,
  comparisonBound,
  EMBED_STAGE,
  embeddingText,
  embedSeeds,
  place,
  startLocal,
  type EmbedInput,
  type EmbeddingBlocking,
} from "../embedding-blocking/stages";

/** The inputs as given, one task each, finished by the operator itself at the start (no call): what clusters and resolutions read. */
export const RECORDS_STAGE = "records";
export const COMPARE_STAGE = "compare";
export const RESOLVE_STAGE = "resolve";

export interface ResolveJobSpec extends JobSpecBase {
  type: "resolve";
  compare: CallSpec;
  resolution: CallSpec | null;
  blocking: Blocking;
  maxComparisons: number;
  /** An embedding blocking's call and bounds (specs stored before it: none). */
  neighbours?: EmbeddingBlocking | null;
}

/** What each record's embedding reads: its keys' values, or (no keys) the whole record. */
const textsOf = (spec: ResolveJobSpec, records: unknown[]): (string | null)[] =>
  records.map((record) => embeddingText(record, spec.blocking.keys.length > 0 ? spec.blocking.keys : null));

/** A comparison's task input: the two records' indices (their values are the records stage's; an estimate adds them). */
export interface PairInput {
  a: number;
  b: number;
  item_a?: unknown;
  item_b?: unknown;
}

export interface ClusterInput {
  members: number[];
  items: unknown[];
}

/** Union-find over the matched pairs: every index in one cluster, clusters by their first index. */
export function clustersOf(total: number, matches: [number, number][]): number[][] {
  const parent = Array.from({ length: total }, (_, i) => i);
  const root = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] as number;
    while (parent[i] !== r) [i, parent[i]] = [parent[i] as number, r];
    return r;
  };
  for (const [a, b] of matches) {
    const [ra, rb] = [root(a), root(b)];
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  const byRoot = new Map<number, number[]>();
  for (let i = 0; i < total; i++) {
    const r = root(i);
    const list = byRoot.get(r);
    if (list) list.push(i);
    else byRoot.set(r, [i]);
  }
  return [...byRoot.values()].sort((x, y) => (x[0] as number) - (y[0] as number));
}

function compared(reader: PlanReader): { matches: [number, number][]; failed: number } {
  const matches: [number, number][] = [];
  let failed = 0;
  for (const task of reader.done(COMPARE_STAGE)) {
    if (!task.success) failed++;
    else if ((task.output as { match?: unknown } | null)?.match === true) {
      const pair = task.input as PairInput;
      matches.push([pair.a, pair.b]);
    }
  }
  return { matches, failed };
}

function advance(spec: ResolveJobSpec, reader: PlanReader, trigger: TaskView | null): Advance {
  // The start (and a recover's re-evaluation): the records not finished yet are, as given. Only
  // then: each record finished by it triggers its own advance, which waits for the last one.
  const records = reader.stage(RECORDS_STAGE);
  const total = records?.total ?? 0; // how many inputs
  const unrecorded = records !== undefined && records.completed < records.total; // counts, not the rows: this runs after every task
  if (unrecorded && trigger !== null) return { ready: [] };
  if (unrecorded) {
    const local = [];
    for (let index = 0; index < total; index++) {
      const task = reader.task(RECORDS_STAGE, index);
      if (task && task.state !== "done") local.push({ stage: RECORDS_STAGE, index, input: task.input, output: null });
    }
    if (spec.neighbours) local.push(...startLocal(reader)); // records with nothing to embed
    return { ready: [], local };
  }
  const record = (index: number): unknown => reader.task(RECORDS_STAGE, index)?.input ?? null;
  if (spec.neighbours) {
    if (trigger?.stage === EMBED_STAGE) return { ready: [], local: place(spec.neighbours, reader, trigger) };
    if (!allPlaced(reader)) return { ready: [] };
    // The pairs are chosen once, when the last record is placed (or on a re-evaluation before any is compared): never per comparison.
    const choosing = trigger === null || BLOCKING_STAGES.includes(trigger.stage);
    if (choosing && reader.extent(COMPARE_STAGE) === 0) {
      const ready = blockedPairs(spec.neighbours, reader).map(([a, b], index) => ({ stage: COMPARE_STAGE, index, input: { a, b } satisfies PairInput }));
      if (ready.length > 0) return { ready, totals: { [COMPARE_STAGE]: ready.length } };
    }
  }
  const compare = reader.stage(COMPARE_STAGE);
  if (compare && compare.completed < compare.total) return { ready: [] };
  const { matches, failed } = compared(reader);
  const clusters = clustersOf(total, matches);
  const output = { clusters, failed, ...(spec.neighbours ? { embeddings_failed: unembedded(reader) } : {}) };
  const end = (resolved: unknown[] | null): Advance => ({ ready: [], end: { status: "completed", output: { ...output, resolved }, error: null } });
  if (!spec.resolution) return end(null);
  const groups = clusters.filter((c) => c.length > 1);
  if (reader.extent(RESOLVE_STAGE) === 0 && groups.length > 0) {
    const ready = groups.map((members, index) => ({ stage: RESOLVE_STAGE, index, input: { members, items: members.map(record) } satisfies ClusterInput }));
    return { ready, totals: { [RESOLVE_STAGE]: groups.length } };
  }
  const resolve = reader.stage(RESOLVE_STAGE);
  if (resolve && resolve.completed < resolve.total) return { ready: [] };
  const resolutions = new Map<number, unknown>();
  for (const task of reader.done(RESOLVE_STAGE)) resolutions.set((task.input as ClusterInput).members[0] as number, task.success ? task.output : null);
  return end(clusters.map((c) => (c.length > 1 ? (resolutions.get(c[0] as number) ?? null) : record(c[0] as number))));
}

/** The plan: the records (finished at the start), every blocked pair's comparison, the resolutions sized once the clusters are known. */
export function resolvePlan(spec: ResolveJobSpec, inputs: unknown[]): Plan {
  if (spec.neighbours) {
    const texts = textsOf(spec, inputs);
    return {
      stages: [
        { name: RECORDS_STAGE, total: inputs.length },
        ...blockingStages(texts),
        { name: COMPARE_STAGE, total: 0 },
        { name: RESOLVE_STAGE, total: 0, skipped: spec.resolution === null },
      ],
      tasks: [...inputs.map((input, index) => ({ stage: RECORDS_STAGE, index, input, blocked: true })), ...embedSeeds(texts, null, null)],
    };
  }
  const { pairs } = blockPairs(inputs, spec.blocking, spec.maxComparisons); // refused over the bound at submission
  return {
    stages: [
      { name: RECORDS_STAGE, total: inputs.length },
      { name: COMPARE_STAGE, total: pairs.length },
      { name: RESOLVE_STAGE, total: 0, skipped: spec.resolution === null },
    ],
    tasks: [
      ...inputs.map((input, index) => ({ stage: RECORDS_STAGE, index, input, blocked: true })),
      ...pairs.map(([a, b], index) => ({ stage: COMPARE_STAGE, index, input: { a, b } satisfies PairInput })),
    ],
  };
}

export const resolveOperator: Operator<ResolveJobSpec> = {
  v1: false,
  startedFields: { type: "resolve" },
  mainStage: () => COMPARE_STAGE,
  plan: resolvePlan,
  advance,
  work: (spec, stage) =>
    stage === EMBED_STAGE && spec.neighbours
      ? { kind: "call", tenantId: spec.tenantId, call: spec.neighbours.call, oneModel: true } // vectors of another model would not compare
      : { kind: "call", tenantId: spec.tenantId, call: stage === RESOLVE_STAGE && spec.resolution ? spec.resolution : spec.compare },
  batchable: () => true, // the embeddings, the pair comparisons, and the resolution call of each cluster
  vars: (_spec, task, reader) => {
    if (task.stage === EMBED_STAGE) return { item: (task.input as EmbedInput).text };
    if (task.stage === RESOLVE_STAGE) return { items: (task.input as ClusterInput).items };
    const pair = task.input as PairInput;
    const record = (index: number) => reader?.task(RECORDS_STAGE, index)?.input ?? null;
    return { item_a: "item_a" in pair ? pair.item_a : record(pair.a), item_b: "item_b" in pair ? pair.item_b : record(pair.b) };
  },
  result: (_spec, task, finish) => (BLOCKING_STAGES.includes(task.stage) ? blockingResult(task, finish) : { stage: task.stage, ...itemResult(task, finish) }),
  // Comparisons that run again may change the clusters: their resolutions are planned anew. An
  // embedding that failed stays failed: its record was placed with no neighbours, the pairs chosen.
  redoAfter: (_spec, _reader, tasks) => ({
    rerun: [],
    drop: tasks.some((t) => t.stage === COMPARE_STAGE) ? [RESOLVE_STAGE] : [],
    skip: tasks.filter((t) => t.stage === EMBED_STAGE),
  }),
  // Records make no call; resolutions are sized by the clusters; an embedding blocking's comparisons by their bound.
  estimateTasks: (spec, plan) => {
    const records = plan.tasks.filter((t) => t.stage === RECORDS_STAGE).map((t) => t.input); // by index
    const withItems = ({ a, b }: PairInput) => ({ a, b, item_a: records[a], item_b: records[b] }) satisfies PairInput;
    const resolutions = spec.resolution ? "Resolutions (one call per cluster of two or more) are not counted." : "";
    if (!spec.neighbours) {
      const tasks = plan.tasks.filter((t) => t.stage === COMPARE_STAGE).map((t) => ({ ...t, input: withItems(t.input as PairInput), exact: true }));
      return { tasks, note: resolutions };
    }
    const embeds = plan.tasks.filter((t) => t.stage === EMBED_STAGE).map((t) => ({ ...t, exact: true }));
    const n = records.length;
    const bound = Math.min(comparisonBound(spec.neighbours, n), (n * (n - 1)) / 2);
    const compares = Array.from({ length: bound }, (_, index) => {
      const a = index % n;
      const b = (a + 1 + Math.floor(index / n)) % n; // pairs stand-ins: each record with the next top_k
      return { stage: COMPARE_STAGE, index, input: withItems({ a, b }), exact: false };
    });
    const note = `${embeds.length} embedding calls; comparisons counted at their bound, each record's top_k (${spec.neighbours.topK}): the neighbours are known once embedded.`;
    return { tasks: [...embeds, ...compares], note: [note, resolutions].filter(Boolean).join(" ") };
  },
};
