/**
 * What an evaluation says (contract v4, "Evaluations"): per item, the judge's verdicts, the gold
 * match and the preference between two jobs; over the job, every rate with its Wilson interval at
 * the evaluation's confidence — pass rates per criterion, gold accuracy (with precision, recall
 * and F1 for filter and classify, and per-field accuracy for objects), and the A/B win rate.
 */
import { wilsonAround, wilsonInterval } from "../../engine/stats";
import { canonicalJson } from "../../lib/canonical-json";
import type { TaskView } from "../../engine/types";
import { labelsOf, sameLabels } from "../classify/labels";

/** One evaluated item: the evaluated job's result, whether the judge sees it, the expected output, the other job's result. */
export interface EvalItem {
  index: number;
  input: unknown;
  output: unknown;
  success: boolean;
  error: string | null;
  judged: boolean;
  expected?: unknown;
  b?: { output: unknown; success: boolean; error: string | null };
}

export type Verdicts = Record<string, { pass: boolean; reason: string }>;
export type Winner = "A" | "B" | "tie";

/** An item's evaluation (the `items` stage's output). */
export interface ItemVerdict {
  verdicts?: Verdicts | null;
  judge_error?: string | null;
  /** Some criterion did not pass (`?failed=true` lists these). */
  failed?: boolean;
  gold_match?: boolean;
  preference?: { ab: Winner | null; ba: Winner | null; preferred: "a" | "b" | "tie" | null };
}

/**
 * The two orders' answers as one preference: asked A-then-B and B-then-A (where "A" names job B's
 * answer), a job is preferred only when both orders prefer it; any disagreement is a tie, which
 * cancels a judge's bias for a position. Null when either call failed.
 */
export function preferenceOf(ab: TaskView, ba: TaskView): NonNullable<ItemVerdict["preference"]> {
  const winner = (t: TaskView): Winner | null => (t.success ? ((t.output as { winner?: Winner }).winner ?? null) : null);
  const first = winner(ab);
  const second = winner(ba);
  if (first === null || second === null) return { ab: first, ba: second, preferred: null };
  const a = first === "A" && second === "B";
  const b = first === "B" && second === "A";
  return { ab: first, ba: second, preferred: a ? "a" : b ? "b" : "tie" };
}

const same = (x: unknown, y: unknown) => canonicalJson(x) === canonicalJson(y);
const keepOf = (value: unknown): boolean | null =>
  typeof value === "boolean" ? value : typeof (value as { keep?: unknown } | null)?.keep === "boolean" ? (value as { keep: boolean }).keep : null;

/** Whether the item's result is what the gold label says (a failed result never is). */
export function goldMatch(sourceType: string, item: EvalItem): boolean {
  if (!item.success) return false;
  if (sourceType === "filter") return keepOf(item.output) !== null && keepOf(item.output) === keepOf(item.expected);
  if (sourceType === "classify") return sameLabels(item.output, item.expected);
  const expected = item.expected;
  if (isObject(expected) && isObject(item.output)) return Object.entries(expected).every(([k, v]) => same((item.output as Record<string, unknown>)[k], v));
  return same(item.output, expected);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const ratio = (k: number, n: number) => (n === 0 ? null : k / n);

type Rate = { value: number | null; interval: [number, number] | null };
const rateOf = (k: number, n: number, confidence: number): Rate => ({ value: ratio(k, n), interval: n === 0 ? null : wilsonInterval(k, n, confidence) });

/** Precision, recall and F1 of one positive class from counts. */
function prf(tp: number, fp: number, fn: number) {
  const precision = ratio(tp, tp + fp);
  const recall = ratio(tp, tp + fn);
  const f1 = precision !== null && recall !== null && precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : null;
  return { precision, recall, f1 };
}

function goldSummary(sourceType: string, items: EvalItem[], matches: boolean[], confidence: number) {
  const n = items.length;
  const hits = matches.filter(Boolean).length;
  const { value, interval } = rateOf(hits, n, confidence);
  const base = { n, matched: hits, accuracy: value, interval };
  if (sourceType === "filter") {
    let tp = 0,
      fp = 0,
      fn = 0;
    for (const item of items) {
      const got = item.success ? keepOf(item.output) === true : false;
      const want = keepOf(item.expected) === true;
      if (got && want) tp++;
      else if (got) fp++;
      else if (want) fn++;
    }
    return { ...base, ...prf(tp, fp, fn) };
  }
  if (sourceType === "classify") {
    // Macro averages over the labels the gold names.
    const labels = [...new Set(items.flatMap((i) => labelsOf(i.expected) ?? []))].sort();
    const per = labels.map((label) => {
      let tp = 0,
        fp = 0,
        fn = 0;
      for (const item of items) {
        const got = item.success ? (labelsOf(item.output) ?? []).includes(label) : false;
        const want = (labelsOf(item.expected) ?? []).includes(label);
        if (got && want) tp++;
        else if (got) fp++;
        else if (want) fn++;
      }
      return prf(tp, fp, fn);
    });
    const mean = (xs: (number | null)[]) => (xs.some((x) => x === null) || xs.length === 0 ? null : (xs as number[]).reduce((a, b) => a + b, 0) / xs.length);
    return { ...base, precision: mean(per.map((p) => p.precision)), recall: mean(per.map((p) => p.recall)), f1: mean(per.map((p) => p.f1)) };
  }
  const fields = new Map<string, { k: number; n: number }>();
  for (const item of items) {
    if (!isObject(item.expected)) continue;
    for (const [field, want] of Object.entries(item.expected)) {
      const f = fields.get(field) ?? { k: 0, n: 0 };
      f.n++;
      if (item.success && isObject(item.output) && same(item.output[field], want)) f.k++;
      fields.set(field, f);
    }
  }
  if (fields.size === 0) return base;
  const byField = Object.fromEntries(
    [...fields]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([field, f]) => {
        const r = rateOf(f.k, f.n, confidence);
        return [field, { n: f.n, accuracy: r.value, interval: r.interval }];
      }),
  );
  return { ...base, by_field: byField };
}

/** The job's output from its finished `items` tasks. */
export function evaluationOutput(
  spec: { criteria: string[]; confidence: number; sourceType: string; seed: number; mode: "judge" | "compare" | "gold" },
  done: TaskView[],
) {
  const { confidence } = spec;
  const out: Record<string, unknown> = { confidence, seed: spec.seed };
  const judged = done.filter((t) => (t.input as EvalItem).judged);
  if (spec.mode === "judge") {
    const verdicts = judged.map((t) => (t.output as ItemVerdict).verdicts).filter((v): v is Verdicts => Boolean(v));
    out.sample_size = verdicts.length;
    out.judge_failed = judged.length - verdicts.length;
    out.criteria = Object.fromEntries(
      spec.criteria.map((name) => {
        const passed = verdicts.filter((v) => v[name]?.pass === true).length;
        const r = rateOf(passed, verdicts.length, confidence);
        return [name, { passed, judged: verdicts.length, pass_rate: r.value, interval: r.interval }];
      }),
    );
  }
  if (spec.mode === "compare") {
    const prefs = judged.map((t) => (t.output as ItemVerdict).preference?.preferred ?? null);
    const decided = prefs.filter((p): p is "a" | "b" | "tie" => p !== null);
    const winsA = decided.filter((p) => p === "a").length;
    const winsB = decided.filter((p) => p === "b").length;
    const ties = decided.length - winsA - winsB;
    const n = decided.length;
    out.sample_size = n;
    out.judge_failed = prefs.length - n;
    // A tie counts half a win to each: the share of the comparisons A wins.
    out.compare = {
      wins_a: winsA,
      wins_b: winsB,
      ties,
      win_rate_a: { value: ratio(winsA + ties / 2, n), interval: n === 0 ? null : wilsonAround((winsA + ties / 2) / n, n, confidence) },
    };
  }
  const gold = done.filter((t) => "expected" in (t.input as EvalItem));
  if (gold.length > 0) {
    const items = gold.map((t) => t.input as EvalItem);
    out.gold = goldSummary(
      spec.sourceType,
      items,
      gold.map((t) => (t.output as ItemVerdict).gold_match === true),
      confidence,
    );
  }
  return out;
}
