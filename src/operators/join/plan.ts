/**
 * The join operator (POST /v1/join): which (left, right) pairs meet a condition.
 * - `pairs`: one judgement per blocked pair (../judge.ts, so a cascade — fixed or with a target —
 *   applies as the filter's), each answering `{match, reason}`;
 * - `classify`: one call per left item with candidates, choosing among them (`{matches}`: their
 *   numbers) — the semantic-join rewrite, one prompt where `pairs` makes one per candidate.
 * The job's output: `{pairs: [[left, right], …]}` (by left, then right), how many calls `failed`,
 * the `strategy` run and the `comparisons` (pairs judged, either way).
 */
import type { CallSpec, Operator, TaskView } from "../../engine/types";
import { judgeOperator, type JudgeSpec } from "../judge";
import { completeWhenAllDone, ITEMS_STAGE, itemResult, itemsPlan } from "../single-stage";
import { filterVerdict, keepConfidence } from "../filter/plan";
import type { Blocking } from "../resolve/blocking";
import { EMBED_STAGE, type EmbeddingBlocking } from "../embedding-blocking/stages";
import { embeddedJoin } from "./embedded";

/** A pair's task input (`pairs`): its indices and its two records. */
export interface PairTask {
  l: number;
  r: number;
  left: unknown;
  right: unknown;
}

/** A left item's task input (`classify`): its candidates' right indices and records. */
export interface ChooseTask {
  l: number;
  left: unknown;
  candidates: number[];
  rights: unknown[];
}

export interface JoinJobSpec extends JudgeSpec {
  type: "join";
  strategy: "pairs" | "classify";
  comparisons: number;
  /** The classify call (strategy classify): the predicate once per candidate. */
  choose: CallSpec | null;
  /** A key blocking and the comparisons' bound: what a pipeline step finds its pairs by when it starts (specs stored before: none). */
  blocking?: Blocking | null;
  maxComparisons?: number;
  /** An embedding blocking (./embedded.ts; specs stored before it: none): the job's inputs are then the left list and the right. */
  neighbours?: EmbeddingBlocking | null;
  /** The embedding blocking's keys (none: whole items embedded). */
  blockingKeys?: string[];
}

const MATCH = "match";

type Found = { pairs: [number, number][]; failed: number };

function pairsFound(done: TaskView[]): Found {
  const out: Found = { pairs: [], failed: 0 };
  for (const task of done) {
    if (!task.success) out.failed++;
    else if ((task.output as Record<string, unknown> | null)?.[MATCH] === true) {
      const envelope = task.input as { item?: PairTask } & PairTask;
      const pair = envelope.item ?? envelope; // with a cascade the item is wrapped (../judge.ts)
      out.pairs.push([pair.l, pair.r]);
    }
  }
  return out;
}

function chosenFound(done: TaskView[]): Found & { ignored: number } {
  const out = { pairs: [] as [number, number][], failed: 0, ignored: 0 };
  for (const task of done) {
    if (!task.success) {
      out.failed++;
      continue;
    }
    const { l, candidates } = task.input as ChooseTask;
    const matches = (task.output as { matches?: unknown } | null)?.matches;
    for (const n of new Set(Array.isArray(matches) ? matches : [])) {
      const r = typeof n === "number" ? candidates[n] : undefined;
      if (r === undefined)
        out.ignored++; // a number no candidate has
      else out.pairs.push([l, r]);
    }
  }
  return out;
}

const sorted = (pairs: [number, number][]) => pairs.sort((x, y) => x[0] - y[0] || x[1] - y[1]);

const pairsOperator = judgeOperator<JoinJobSpec>({
  type: "join",
  decide: (cascade, answer) => filterVerdict(cascade, answer, MATCH),
  score: (answer) => keepConfidence(answer, MATCH),
  point: (cheap, oracle) => ({ kind: "binary", score: keepConfidence(cheap, MATCH), oracleKeep: (oracle as Record<string, unknown> | null)?.[MATCH] === true }),
  output: (_spec, done) => {
    const found = pairsFound(done);
    return { pairs: sorted(found.pairs), failed: found.failed, strategy: "pairs", comparisons: done.length };
  },
});

const classifyOperator: Operator<JoinJobSpec> = {
  v1: false,
  startedFields: { type: "join" },
  mainStage: () => ITEMS_STAGE,
  plan: (_spec, inputs) => itemsPlan(inputs),
  advance: (_spec, reader) => {
    const next = completeWhenAllDone(reader);
    if (!next.end) return next;
    const done = reader.done(ITEMS_STAGE);
    const found = chosenFound(done);
    const comparisons = done.reduce((n, t) => n + (t.input as ChooseTask).candidates.length, 0);
    const output = { pairs: sorted(found.pairs), failed: found.failed, ignored: found.ignored, strategy: "classify", comparisons };
    return { ...next, end: { ...next.end, output } };
  },
  work: (spec) => ({ kind: "call", tenantId: spec.tenantId, call: spec.choose ?? spec.call }),
  batchable: () => true,
  vars: (_spec, task) => {
    const { left, rights } = task.input as ChooseTask;
    return { left, candidates: rights };
  },
  result: (_spec, task, finish) => ({ stage: task.stage, ...itemResult(task, finish) }),
};

/** The operator of the strategy the spec runs (chosen at submission: `auto` is decided there). */
const strategyOf = (spec: JoinJobSpec): Operator<JoinJobSpec> => (spec.strategy === "classify" ? classifyOperator : pairsOperator);
const embedded = embeddedJoin(strategyOf);
/** Its operator: the strategy's, after the embedding blocking's stages when it has one. */
const of = (spec: JoinJobSpec): Operator<JoinJobSpec> => (spec.neighbours ? embedded : strategyOf(spec));

export const joinOperator: Operator<JoinJobSpec> = {
  v1: false,
  startedFields: { type: "join" },
  mainStage: (spec) => of(spec).mainStage(spec),
  plan: (spec, inputs) => of(spec).plan(spec, inputs),
  advance: (spec, reader, trigger) => of(spec).advance(spec, reader, trigger),
  work: (spec, stage) => of(spec).work(spec, stage),
  batchable: () => true,
  vars: (spec, task, reader) => {
    if (spec.neighbours && task.stage === EMBED_STAGE) return embedded.vars(spec, task, reader);
    if (spec.strategy === "classify") return classifyOperator.vars(spec, task, reader);
    const item = pairsOperator.vars(spec, task, reader).item as PairTask;
    return { left: item.left, right: item.right };
  },
  result: (spec, task, finish) => of(spec).result(spec, task, finish),
  redoAfter: (spec, reader, tasks) => of(spec).redoAfter?.(spec, reader, tasks) ?? { rerun: [], drop: [] },
  // Every prompt is known before the job runs (the pairs, or the left items with their candidates).
  estimateTasks: (spec, plan) => of(spec).estimateTasks?.(spec, plan) ?? { tasks: plan.tasks.map((t) => ({ ...t, exact: true })), note: "" },
};
