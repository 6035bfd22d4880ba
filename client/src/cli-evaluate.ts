/**
 * `fanout evaluate JOB_ID --judge MODEL --criterion "name: what passing means" …`: an evaluation of
 * an ended job (POST /v1/evaluations) — a judge over a seeded sample, gold labels from a file, or
 * A/B against another job — followed with a progress line, its output (rates with intervals)
 * printed; `fanout results EVALUATION_ID --failed true` lists the items the judge failed.
 */
import { readFileSync } from "node:fs";
import type { Fanout } from "./index.js";
import { executionFlag, followStaged, int, jobFlags, need, UsageError, type Flags } from "./cli-staged.js";
import type { OperatorOptions } from "./types.js";

type EvaluationOptions = OperatorOptions<"evaluation">;

/** `name: description` (a bare name is its own description). */
function criterion(text: string): { name: string; description: string } {
  const at = text.indexOf(":");
  return at > 0 ? { name: text.slice(0, at).trim(), description: text.slice(at + 1).trim() } : { name: text.trim(), description: text.trim() };
}

/** Gold labels: a .json list, or .jsonl lines, of `{"index", "expected"}`. */
function gold(path: string): EvaluationOptions["gold"] {
  const text = readFileSync(path, "utf8");
  const rows = path.endsWith(".json")
    ? (JSON.parse(text) as unknown[])
    : text
        .split("\n")
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as unknown);
  return rows as EvaluationOptions["gold"];
}

export function evaluationOptions(jobId: string, values: Flags, criteria: { name: string; description: string }[]): EvaluationOptions {
  const judgeModel = typeof values.judge === "string" ? values.judge : undefined;
  if (judgeModel === undefined && criteria.length > 0) throw new UsageError("--criterion goes with --judge MODEL");
  if (judgeModel !== undefined && criteria.length === 0) throw new UsageError('--judge needs at least one --criterion "name: what passing means"');
  const { concurrency, maxRetries, timeoutSecs, tokenBudget } = jobFlags(values);
  return {
    jobId,
    judge: judgeModel ? { model: judgeModel, criteria } : undefined,
    gold: typeof values.gold === "string" ? gold(values.gold) : undefined,
    compare: typeof values.compare === "string" ? { jobIdB: values.compare } : undefined,
    sample:
      values.sample !== undefined || values.seed !== undefined ? { size: int(values.sample, "--sample") ?? 100, seed: int(values.seed, "--seed") } : undefined,
    concurrency,
    maxRetries,
    timeoutSecs,
    tokenBudget,
    ...executionFlag(values),
  } as EvaluationOptions;
}

/** `criteria`: each `--criterion`, as given. */
export function runEvaluate(client: Fanout, jobId: string | undefined, values: Flags, criteria: string[]): Promise<number> {
  return followStaged(client.evaluation(evaluationOptions(need(jobId, "JOB_ID"), values, criteria.map(criterion))), values);
}
