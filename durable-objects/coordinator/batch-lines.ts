/** A batch line's result as an attempt's outcome, and the outcome of a line an ended batch has none for. */
import type { AttemptOutcome } from "../../src/engine/retry-policy";
import type { LineResult } from "../../src/llm/batch/types";
import { interpretText, scoredByLogprobs, type CompiledCall } from "../../src/engine/attempt";
import type { StageWork } from "../../src/engine/types";

/**
 * A line an ended batch has no result for (the provider left it out, or cancelled it by itself),
 * or whose result was past what one read keeps: an attempt (it may have been billed), retried in
 * a later batch while max_retries allows — never sent again uncounted.
 */
export function missingLine(cut: boolean): AttemptOutcome {
  const error = cut
    ? "The batch's results were larger than one read keeps (src/llm/batch/types.ts): this line's was not read."
    : "The provider's batch ended without a result for this line.";
  return { kind: "transient", error, retryAfterMs: null, usage: { input_tokens: 0, output_tokens: 0 } };
}

/** A line's result as an attempt's outcome (null: the line never ran). */
export function lineOutcome(result: LineResult, compiled: CompiledCall, work: Extract<StageWork, { kind: "batch" }>): AttemptOutcome | null {
  const none = { input_tokens: 0, output_tokens: 0 };
  switch (result.kind) {
    case "answer":
      return scoredByLogprobs(work.call, result.response, interpretText(result.response.text, compiled, work.call.maxOutputBytes, result.response.usage));
    case "error":
      return result.permanent
        ? { kind: "permanent", error: result.message, errorKind: "llm_error", usage: none }
        : { kind: "transient", error: result.message, retryAfterMs: null, usage: none };
    case "expired":
      return { kind: "expired", error: "The provider's batch window closed before this line ran.", usage: none };
    case "cancelled":
      return null;
  }
}
