/**
 * POST /v1/join submissions, and the join as a pipeline step (./step.ts): the predicate checked
 * (it must read `left` and `right`), the blocking's pairs counted (422 `too_many_comparisons` over
 * `max_comparisons`, before anything is stored or the step starts), the strategy settled (`auto`:
 * the cheaper by the estimate, at submission only), the tasks made, then the shared submission.
 */
import { baseSpec, submitJob, type JobBase, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { ApiError, invalidRequest } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { keepSchema } from "../filter/schema";
import { yesNoCascade } from "../filter/submit";
import { itemCall } from "../task-call";
import type { Blocking } from "../resolve/blocking";
import { blockingOf } from "../resolve/submit";
import { byLeftOf, crossPairs } from "./blocking";
import { boundPairs, strategyItems } from "./embedded";
import { checkEmbeddingBlocking, embeddingBlocking } from "../embedding-blocking/submit";
import { joinOperator, type JoinJobSpec } from "./plan";
import { CLASSIFY_INSTRUCTION, classifyTemplate, MATCH_DESCRIBED, MATCHES_SCHEMA, MAX_CLASSIFY_CANDIDATES, pairInstruction, type JoinRequest } from "./schema";

const PAIR_OUTPUT_TOKENS = 25; // `{match, reason}`: what the estimate counts a pair's answer at
const CHOICE_OUTPUT_TOKENS = 8; // `{matches}`, and each number chosen

type Lists = [unknown[], unknown[]];

/** 422 `too_many_comparisons` when the blocking judges more pairs than allowed (or could not count them within its bounds). */
function pairsWithin(lists: Lists, blocking: Blocking | null, maxComparisons: number): [number, number][] {
  const counted = crossPairs(lists[0], lists[1], blocking, maxComparisons);
  if (!counted.over) return counted.pairs;
  const suggestion = blocking ? "block on more keys (or a stricter method), or raise max_comparisons" : "give a blocking, or raise max_comparisons";
  const count = blocking ? counted.pairs.length : counted.work;
  throw new ApiError(422, "too_many_comparisons", `The join compares more than ${maxComparisons} pairs (at least ${count}): ${suggestion}.`, {
    details: { comparisons: count, complete: !blocking, max_comparisons: maxComparisons, suggestion },
  });
}

/** An item's tokens as the estimate counts them (its JSON at 4 characters a token). */
const tokensOf = (value: unknown): number => Math.ceil((typeof value === "string" ? value.length : JSON.stringify(value ?? null).length) / 4);

/** The strategy `auto` settles on: classify when every left item's candidates fit one list and its prompts and answers cost fewer tokens. */
function settle(body: JoinRequest, pairs: [number, number][], byLeft: Map<number, number[]>): "pairs" | "classify" {
  if (body.strategy !== "auto") return body.strategy;
  if ([...byLeft.values()].some((c) => c.length > MAX_CLASSIFY_CANDIDATES) || body.cascade) return "pairs";
  const template = tokensOf(body.predicate_template);
  const instruction = tokensOf(CLASSIFY_INSTRUCTION);
  // Each item counted once, however many pairs it is in.
  const [left, right] = [body.left.map(tokensOf), body.right.map(tokensOf)];
  const pair = (l: number, r: number) => template + (left[l] ?? 0) + (right[r] ?? 0); // the predicate rendered for one pair
  const pairsCost = pairs.reduce((n, [l, r]) => n + instruction + pair(l, r) + PAIR_OUTPUT_TOKENS, 0);
  let classifyCost = 0;
  for (const [l, candidates] of byLeft) {
    classifyCost += instruction + CHOICE_OUTPUT_TOKENS * (1 + candidates.length / 4);
    for (const r of candidates) classifyCost += pair(l, r);
  }
  return classifyCost < pairsCost ? "classify" : "pairs";
}

/** The join's spec from its request's fields and a settled strategy (also a pipeline step's, with the pipeline's job fields in `base`). */
export function joinSpec(env: Env, body: Omit<JoinRequest, "left" | "right">, base: JobBase, strategy: "pairs" | "classify"): JoinJobSpec {
  const blocking = body.blocking ? blockingOf(body.blocking) : null;
  const neighbours = body.blocking && blocking?.method === "embedding" ? embeddingBlocking(env, body, body.blocking, true) : null;
  if (strategy === "classify" && body.cascade)
    throw invalidRequest("A cascade judges pairs: it needs strategy pairs.", [{ path: "cascade", message: "not with strategy classify" }]);
  const pairCall = (withConfidence: boolean, model?: string) =>
    itemCall(env, body, {
      template: body.predicate_template,
      field: "predicate_template",
      instruction: pairInstruction(withConfidence),
      outputSchema: keepSchema(withConfidence, "match", MATCH_DESCRIBED),
      reads: ["left", "right"],
      model,
    });
  const choose =
    strategy === "classify"
      ? itemCall(env, body, {
          template: classifyTemplate(body.predicate_template),
          field: "predicate_template",
          instruction: CLASSIFY_INSTRUCTION,
          outputSchema: MATCHES_SCHEMA,
          reads: ["left", "candidates"],
        })
      : null;
  const cascade = body.cascade ? yesNoCascade(body.cascade, pairCall(true, body.cascade.model), "match") : null;
  return {
    ...base,
    type: "join",
    strategy,
    comparisons: 0, // unused since the output counts the pairs judged (kept for specs stored before)
    call: pairCall(false),
    choose,
    cascade,
    blocking: neighbours ? null : blocking,
    maxComparisons: body.max_comparisons,
    ...(neighbours && blocking ? { neighbours, blockingKeys: blocking.keys } : {}),
  };
}

/** The pairs the spec judges of the two lists (422 over its comparisons): those to judge, or an embedding blocking's bound stand-ins. */
function joinPairs(spec: JoinJobSpec, lists: Lists): [number, number][] {
  const [left, right] = lists;
  const maxComparisons = spec.maxComparisons ?? Number.POSITIVE_INFINITY;
  if (!spec.neighbours) return pairsWithin(lists, spec.blocking ?? null, maxComparisons);
  checkEmbeddingBlocking(spec.neighbours, left.length + right.length, left.length, maxComparisons, "left");
  return boundPairs(left.length, right.length, spec.neighbours.topK); // what `auto` and the estimate count before the pairs are known
}

/** 400 when a classify spec's candidates (those pairs, by left item) do not fit one call each. */
function checkCandidates(spec: JoinJobSpec, pairs: [number, number][]): void {
  if (spec.strategy !== "classify" || spec.neighbours) return; // an embedding blocking's candidates: top_k ≤ 50
  const long = [...byLeftOf(pairs)].find(([, c]) => c.length > MAX_CLASSIFY_CANDIDATES);
  if (!long) return;
  const message = `left[${long[0]}] has ${long[1].length} candidates; one classify call chooses among at most ${MAX_CLASSIFY_CANDIDATES}: give a blocking, or use strategy pairs`;
  throw invalidRequest("The join's candidates do not fit classify calls.", [{ path: "strategy", message }]);
}

/**
 * The two lists checked against the spec (422 over its comparisons; 400 when classify's candidates
 * do not fit one call), and its pairs: those to judge, or an embedding blocking's bound stand-ins.
 */
export function checkJoin(spec: JoinJobSpec, lists: Lists): [number, number][] {
  const pairs = joinPairs(spec, lists);
  checkCandidates(spec, pairs);
  return pairs;
}

/** The operator's inputs: the two lists under an embedding blocking (./embedded.ts), else the tasks of the pairs found. */
export function joinInputs(spec: JoinJobSpec, lists: Lists, pairs: [number, number][]): unknown[] {
  if (spec.neighbours) return lists;
  const [left, right] = lists;
  return strategyItems(spec, pairs, (index) => (index < left.length ? left[index] : right[index - left.length]), left.length);
}

export async function submitJoinJob(env: Env, tenantId: string, body: JoinRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body);
  const lists: Lists = [body.left, body.right];
  const base = baseSpec(newId("job"), tenantId, body);
  // The pairs do not depend on the strategy: counted once (a trigram blocking's count can look at 5,000,000 candidates), then `auto` settled on them.
  const provisional = joinSpec(env, body, base, body.strategy === "classify" ? "classify" : "pairs");
  const pairs = joinPairs(provisional, lists);
  const strategy = settle(body, pairs, byLeftOf(pairs));
  const spec = strategy === provisional.strategy ? provisional : joinSpec(env, body, base, strategy);
  checkCandidates(spec, pairs);
  const values = [...body.left, ...body.right];
  return submitJob(env, tenantId, { spec, operator: joinOperator, body, inputs: joinInputs(spec, lists, pairs), values }, idempotencyKey, dryRun);
}
