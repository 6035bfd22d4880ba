/**
 * POST /v1/join submissions: the predicate checked (it must read `left` and `right`), the blocking's
 * pairs counted (422 `too_many_comparisons` over `max_comparisons`, before anything is stored), the
 * strategy settled (`auto`: the cheaper by the estimate), the tasks made, then the shared submission.
 */
import { baseSpec, submitJob, type SubmitAnswer } from "../../jobs/submit";
import { checkFieldCaps } from "../../jobs/field-caps";
import { ApiError, invalidRequest } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { keepSchema } from "../filter/schema";
import { yesNoCascade } from "../filter/submit";
import { itemCall } from "../task-call";
import type { Blocking } from "../resolve/blocking";
import { blockingOf } from "../resolve/submit";
import { crossPairs } from "./blocking";
import { checkEmbeddingBlocking, embeddingBlocking } from "../embedding-blocking/submit";
import { joinOperator, type ChooseTask, type JoinJobSpec, type PairTask } from "./plan";
import { CLASSIFY_INSTRUCTION, classifyTemplate, MATCH_DESCRIBED, MATCHES_SCHEMA, MAX_CLASSIFY_CANDIDATES, pairInstruction, type JoinRequest } from "./schema";

const PAIR_OUTPUT_TOKENS = 25; // `{match, reason}`: what the estimate counts a pair's answer at
const CHOICE_OUTPUT_TOKENS = 8; // `{matches}`, and each number chosen

/** 422 `too_many_comparisons` when the blocking judges more pairs than allowed (or could not count them within its bounds). */
function pairsWithin(body: JoinRequest, blocking: Blocking | null): [number, number][] {
  const counted = crossPairs(body.left, body.right, blocking, body.max_comparisons);
  if (!counted.over) return counted.pairs;
  const suggestion = blocking ? "block on more keys (or a stricter method), or raise max_comparisons" : "give a blocking, or raise max_comparisons";
  const count = blocking ? counted.pairs.length : counted.work;
  throw new ApiError(422, "too_many_comparisons", `The join compares more than ${body.max_comparisons} pairs (at least ${count}): ${suggestion}.`, {
    details: { comparisons: count, complete: !blocking, max_comparisons: body.max_comparisons, suggestion },
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

/** An embedding blocking's pairs, as the estimate and `auto` count them before they are known: each left item with top_k right items. */
function boundPairs(body: JoinRequest, topK: number): [number, number][] {
  const pairs: [number, number][] = [];
  for (let l = 0; l < body.left.length; l++) for (let k = 0; k < Math.min(topK, body.right.length); k++) pairs.push([l, (l + k) % body.right.length]);
  return pairs;
}

export async function submitJoinJob(env: Env, tenantId: string, body: JoinRequest, idempotencyKey: string | null, dryRun = false): Promise<SubmitAnswer> {
  checkFieldCaps(body);
  const blocking = body.blocking ? blockingOf(body.blocking) : null;
  const neighbours = body.blocking && blocking?.method === "embedding" ? embeddingBlocking(env, body, body.blocking, body.left.length) : null;
  if (neighbours) checkEmbeddingBlocking(neighbours, body.left.length + body.right.length, body.max_comparisons, "left");
  const pairs = neighbours ? boundPairs(body, neighbours.topK) : pairsWithin(body, blocking);
  const byLeft = new Map<number, number[]>();
  for (const [l, r] of pairs) {
    const list = byLeft.get(l);
    if (list) list.push(r);
    else byLeft.set(l, [r]);
  }
  const strategy = settle(body, pairs, byLeft);
  if (strategy === "classify") {
    if (body.cascade) throw invalidRequest("A cascade judges pairs: it needs strategy pairs.", [{ path: "cascade", message: "not with strategy classify" }]);
    const long = [...byLeft].find(([, c]) => c.length > MAX_CLASSIFY_CANDIDATES);
    if (long) {
      const message = `left[${long[0]}] has ${long[1].length} candidates; one classify call chooses among at most ${MAX_CLASSIFY_CANDIDATES}: give a blocking, or use strategy pairs`;
      throw invalidRequest("The join's candidates do not fit classify calls.", [{ path: "strategy", message }]);
    }
  }
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
  const spec: JoinJobSpec = {
    ...baseSpec(newId("job"), tenantId, body),
    type: "join",
    strategy,
    comparisons: pairs.length, // an embedding blocking's: the bound (its output says how many were judged)
    call: pairCall(false),
    choose,
    cascade,
    ...(neighbours && blocking ? { neighbours, blockingKeys: blocking.keys } : {}),
  };
  const values = [...body.left, ...body.right];
  const inputs: unknown[] = neighbours
    ? values // embedded and placed first (./embedded.ts): the pairs are found as the job runs
    : strategy === "classify"
      ? [...byLeft].map(([l, candidates]) => ({ l, left: body.left[l], candidates, rights: candidates.map((r) => body.right[r]) }) satisfies ChooseTask)
      : pairs.map(([l, r]) => ({ l, r, left: body.left[l], right: body.right[r] }) satisfies PairTask);
  return submitJob(env, tenantId, { spec, operator: joinOperator, body, inputs, values }, idempotencyKey, dryRun);
}
