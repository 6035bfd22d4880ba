/**
 * An ended provider batch's results matched to its lines. A `custom_id` the output repeats is the
 * provider's error: the line keeps its first answer that is valid (else its first result), and
 * every other answer of it — billed all the same — is counted as duplicated, never dropped
 * silently nor allowed to replace a valid one. A line with no result (missing, cancelled by the
 * provider, or past the read's bound) is the caller's to settle.
 */
import type { AttemptOutcome } from "../../src/engine/retry-policy";
import type { LineResult } from "../../src/llm/batch/types";

export interface MatchedResults {
  /** Each line's result and outcome (null outcome: the line never ran). */
  byId: Map<string, { result: LineResult; outcome: AttemptOutcome | null }>;
  /** Answers of a repeated custom_id not kept: billed, so counted as duplicated. */
  repeats: { customId: string; outcome: AttemptOutcome }[];
}

export function matchResults(lines: LineResult[], outcomeOf: (result: LineResult) => AttemptOutcome | null): MatchedResults {
  const byId: MatchedResults["byId"] = new Map();
  const repeats: MatchedResults["repeats"] = [];
  for (const result of lines) {
    const outcome = outcomeOf(result);
    const kept = byId.get(result.customId);
    if (!kept) {
      byId.set(result.customId, { result, outcome });
      continue;
    }
    const better = outcome?.kind === "success" && kept.outcome?.kind !== "success";
    const loser = better ? kept : { result, outcome };
    if (better) byId.set(result.customId, { result, outcome });
    if (loser.result.kind === "answer" && loser.outcome) repeats.push({ customId: result.customId, outcome: loser.outcome });
  }
  if (repeats.length > 0)
    console.error(`the provider's batch output repeats ${repeats.length} custom_id(s); each line keeps its first valid answer, the others count as duplicated`);
  return { byId, repeats };
}
