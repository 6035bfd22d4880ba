/**
 * A join blocked by embeddings: its inputs are the two lists (`[left, right]`), whose items —
 * the left list's then the right's — are embedded and placed first (../embedding-blocking/stages.ts); once the last is
 * placed, each left item's top_k nearest right items are its pairs, and the strategy's own
 * operator (./plan.ts: pairs, with its cascade, or classify) starts over them, its stages under
 * their own names (../nested-plan.ts `startPlan`). The output is the strategy's, with
 * `embeddings_failed`: the items whose embedding failed (compared with nothing).
 */
import type { Advance, Operator, PlanReader, TaskSeed } from "../../engine/types";
import { startPlan } from "../nested-plan";
import {
  allPlaced,
  blockedPairs,
  blockingResult,
  blockingStages,
  BLOCKING_STAGES,
  EMBED_STAGE,
  NEIGHBOURS_STAGE,
  embeddingText,
  embedSeeds,
  leftLength,
  place,
  startLocal,
  unembedded,
  type EmbedInput,
  type EmbeddingBlocking,
} from "../embedding-blocking/stages";
import type { ChooseTask, JoinJobSpec, PairTask } from "./plan";
import { byLeftOf } from "./blocking";

/** The strategy's tasks over the pairs found (`record`: an item by its index among both lists). */
export function strategyItems(spec: JoinJobSpec, pairs: [number, number][], record: (index: number) => unknown, left: number): (PairTask | ChooseTask)[] {
  if (spec.strategy === "pairs") return pairs.map(([l, r]) => ({ l, r, left: record(l), right: record(left + r) }));
  return [...byLeftOf(pairs)].map(([l, candidates]) => ({ l, left: record(l), candidates, rights: candidates.map((r) => record(left + r)) }));
}

/** An embedding blocking's pairs as an estimate counts them before they are known: each of `left` items with top_k of `right` (stand-ins, in turn). */
export function boundPairs(left: number, right: number, topK: number): [number, number][] {
  const pairs: [number, number][] = [];
  for (let l = 0; l < left; l++) for (let k = 0; k < Math.min(topK, right); k++) pairs.push([l, (l + k) % right]);
  return pairs;
}

const cfgOf = (spec: JoinJobSpec): EmbeddingBlocking => spec.neighbours as EmbeddingBlocking;

/** The items with their texts: the left list's then the right's, each embedded by its keys (none: the whole item). */
export function embeddedTexts(spec: JoinJobSpec, items: unknown[]): (string | null)[] {
  return items.map((item) => embeddingText(item, spec.blockingKeys?.length ? spec.blockingKeys : null));
}

/** The join of `strategy` (the operator it runs once the pairs are found), over embedding-blocked items. */
export function embeddedJoin(strategy: (spec: JoinJobSpec) => Operator<JoinJobSpec>): Operator<JoinJobSpec> {
  const started = (spec: JoinJobSpec, reader: PlanReader) =>
    strategy(spec)
      .plan(spec, [])
      .stages.some((s) => reader.extent(s.name) > 0);
  const ended = (spec: JoinJobSpec, reader: PlanReader, advance: Advance): Advance => {
    if (!advance.end || advance.end.status !== "completed") return advance;
    const output = { ...(advance.end.output as Record<string, unknown>), embeddings_failed: unembedded(reader) };
    return { ...advance, end: { ...advance.end, output } };
  };
  return {
    v1: false,
    startedFields: { type: "join" },
    mainStage: (spec) => strategy(spec).mainStage(spec),
    plan: (spec, inputs) => {
      const [left = [], right = []] = inputs as [unknown[]?, unknown[]?];
      const items = [...left, ...right];
      const texts = embeddedTexts(spec, items);
      const inner = strategy(spec)
        .plan(spec, [])
        .stages.map((s) => ({ ...s, total: 0 }));
      return { stages: [...blockingStages(texts), ...inner], tasks: embedSeeds(texts, items, left.length) };
    },
    advance: (spec, reader, trigger) => {
      const cfg = cfgOf(spec);
      if (trigger === null && !allPlaced(reader)) {
        const local = startLocal(reader);
        if (local.length > 0) return { ready: [], local };
      }
      if (trigger?.stage === EMBED_STAGE) return { ready: [], local: place(cfg, reader, trigger) };
      if (!allPlaced(reader)) return { ready: [] };
      const op = strategy(spec);
      if (started(spec, reader) || (trigger !== null && !BLOCKING_STAGES.includes(trigger.stage)))
        return ended(spec, reader, op.advance(spec, reader, trigger));
      const record = (index: number) => (reader.task(EMBED_STAGE, index)?.input as EmbedInput | undefined)?.item ?? null;
      const items = strategyItems(spec, blockedPairs(cfg, reader), record, leftLength(reader) ?? 0);
      return ended(spec, reader, startPlan(op, spec, "", reader, items));
    },
    work: (spec, stage) =>
      stage === EMBED_STAGE ? { kind: "call", tenantId: spec.tenantId, call: cfgOf(spec).call, oneModel: true } : strategy(spec).work(spec, stage),
    batchable: () => true,
    vars: (spec, task, reader) => (task.stage === EMBED_STAGE ? { item: (task.input as EmbedInput).text } : strategy(spec).vars(spec, task, reader)),
    result: (spec, task, finish) => (BLOCKING_STAGES.includes(task.stage) ? blockingResult(task, finish) : strategy(spec).result(spec, task, finish)),
    // An embedding that failed stays failed: its item was placed with no neighbours, the pairs chosen.
    redoAfter: (spec, reader, tasks) => {
      const own = strategy(spec).redoAfter?.(
        spec,
        reader,
        tasks.filter((t) => !BLOCKING_STAGES.includes(t.stage)),
      ) ?? { rerun: [], drop: [] };
      return { ...own, skip: [...(own.skip ?? []), ...tasks.filter((t) => t.stage === EMBED_STAGE)] };
    },
    // Every embedding exactly; the judgements at their bound: each left item with top_k right items (stand-ins, in turn).
    estimateTasks: (spec, plan) => {
      const cfg = cfgOf(spec);
      const embeds = plan.tasks.filter((t) => t.stage === EMBED_STAGE);
      const left = (embeds[0]?.input as EmbedInput | undefined)?.left ?? 0;
      const items = embeds.map((t) => (t.input as EmbedInput).item);
      const all = plan.stages.find((s) => s.name === NEIGHBOURS_STAGE)?.total ?? left; // both lists
      const pairs = boundPairs(left, Math.max(1, all - left), cfg.topK);
      const byIndex = new Map(embeds.map((t, i) => [t.index, items[i]]));
      const inner = strategyItems(spec, pairs, (index) => byIndex.get(index) ?? null, left);
      const judged: (TaskSeed & { exact?: boolean })[] = strategy(spec).plan(spec, inner).tasks;
      const note = `${embeds.length} embedding calls; judgements counted at their bound, each left item's top_k (${cfg.topK}): the neighbours are known once embedded.`;
      return { tasks: [...embeds.map((t) => ({ ...t, exact: true })), ...judged.map((t) => ({ ...t, exact: false }))], note };
    },
  };
}
