/**
 * A provider batch's lines: gathered from a stage's pending tasks (rendered, reserved against the
 * budget, within the provider's and our size caps), and a line's result as an attempt's outcome,
 * or the outcome of a line an ended batch has none for.
 */
import type { AttemptOutcome } from "../../src/engine/retry-policy";
import type { BatchApi, LineResult } from "../../src/llm/batch/types";
import { callRequest, interpretText, scoredByLogprobs, type CompiledCall } from "../../src/engine/attempt";
import type { Operator, StageWork } from "../../src/engine/types";
import type { WorkBudget } from "../../src/engine/work-budget";
import type { JobSpec } from "../../src/operators/registry";
import type { BudgetKeeper } from "./budget";
import { taskVars } from "./claims";
import type { CoordinatorStore, TaskRow } from "./store";

const MAX_BATCH_BYTES = 32 * 1024 * 1024; // one batch's JSONL in memory: well under a Durable Object's 128 MB

type BatchWork = Extract<StageWork, { kind: "batch" }>;

/** What gathering a stage's lines needs. */
export interface LineSource {
  spec: JobSpec;
  op: Operator;
  store: CoordinatorStore;
  budget: BudgetKeeper;
  stage: string;
  calls: BatchWork;
  compiled: CompiledCall;
  api: BatchApi;
  /** This invocation's rendering budget: the rest of the rows go in the next alarm's batch. */
  work: WorkBudget;
  customId(row: TaskRow): string;
}

/** The lines of one batch from `rows` (in order, while the budget, the rendering budget and the size caps hold), and the rows whose template failed. */
export function gatherLines(rows: TaskRow[], src: LineSource) {
  const { spec, op, store, budget, stage, calls, compiled, api, work } = src;
  const lines: string[] = [];
  const taken: { row: TaskRow; reserved: { tokens: number; usd: number } }[] = [];
  const unrenderable: { row: TaskRow; outcome: AttemptOutcome }[] = [];
  let bytes = 0;
  let overBudget = false;
  for (const row of rows) {
    if (work.spent) break; // the rest from the next alarm
    const vars = taskVars(spec, op, store, row);
    const reserved = budget.reserve(spec.budget, stage, calls, () => vars);
    if (reserved === null) {
      overBudget = true;
      break;
    }
    const problems = row.problems ? (JSON.parse(row.problems) as string[]) : null;
    let line: string;
    try {
      const prompt = compiled.template.renderVars(vars, work);
      work.produced(prompt);
      // No logprobs in a batch line: a model that refuses them would fail the line, and it cannot be asked again at once.
      line = api.line(src.customId(row), { ...callRequest(calls.call, compiled, prompt, problems), logprobs: false });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      unrenderable.push({
        row,
        outcome: {
          kind: "permanent",
          error: `The template could not be rendered for this item: ${message}`,
          errorKind: "validation",
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      });
      continue;
    }
    if (bytes + line.length + 1 > Math.min(api.maxBytes, MAX_BATCH_BYTES) && lines.length > 0) break;
    bytes += line.length + 1;
    lines.push(line);
    taken.push({ row, reserved });
  }
  return { lines, taken, unrenderable, overBudget };
}

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
