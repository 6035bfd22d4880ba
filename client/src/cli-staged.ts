/**
 * The `fanout` commands of v2: `reduce`, `estimate`, `recover` and `resume`. Each takes the
 * parsed flags and a client, writes to stdout/stderr, and returns the exit code.
 */
import { createWriteStream, readFileSync } from "node:fs";
import type { Fanout, JobHandle } from "./index.js";
import { Progress } from "./progress.js";
import type { MapCompletedEvent, ReduceOptions, TaskResult } from "./types.js";

export type Flags = Record<string, string | boolean | undefined>;

export class UsageError extends Error {}

export function need(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== "string" || !value) throw new UsageError(`${flag} is required`);
  return value;
}

export function int(value: string | boolean | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== "string" || !Number.isFinite(n)) throw new UsageError(`${flag} takes a number`);
  return n;
}

const jsonFile = (path: string | boolean | undefined): Record<string, unknown> | undefined =>
  typeof path === "string" ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>) : undefined;

export function budgetFlag(values: Flags) {
  const total = int(values.budget, "--budget");
  if (total === undefined) return undefined;
  const onExhausted = values["on-exhausted"];
  if (onExhausted !== undefined && onExhausted !== "pause" && onExhausted !== "fail") throw new UsageError("--on-exhausted is pause or fail");
  return { total, onExhausted: onExhausted as "pause" | "fail" | undefined };
}

/** A fold's options from flags: `--input` is a JSON list or object (named inputs), JSONL or CSV. */
export function reduceOptions(values: Flags, inputs: unknown[] | Record<string, unknown>): ReduceOptions {
  const initial = values.initial;
  return {
    inputs,
    model: need(values.model, "--model"),
    initialValue: typeof initial === "string" ? (JSON.parse(initial) as unknown) : undefined,
    innerTask: typeof values["inner-template"] === "string"
      ? { promptTemplate: readFileSync(values["inner-template"], "utf8"), outputSchema: jsonFile(values["inner-schema"]) }
      : undefined,
    reductionTask: { promptTemplate: readFileSync(need(values["reduction-template"], "--reduction-template"), "utf8"), outputSchema: jsonFile(values.schema) },
    concurrency: int(values.concurrency, "--concurrency"),
    maxRetries: int(values["max-retries"], "--max-retries"),
    timeoutSecs: int(values.timeout, "--timeout"),
    systemPrompt: typeof values.system === "string" ? values.system : undefined,
    tokenBudget: budgetFlag(values),
  };
}

/** Runs a fold with progress on stderr; the final accumulator goes to stdout (or --out) as JSON. */
export async function runReduce(client: Fanout, values: Flags, inputs: unknown[] | Record<string, unknown>): Promise<number> {
  const job: JobHandle<TaskResult> = client.reduce(reduceOptions(values, inputs));
  const progress = new Progress();
  const state = { done: 0, failed: 0, total: 0 };
  let end: MapCompletedEvent | null = null;
  job.on({
    MAP_STARTED: (e) => (state.total = e.total),
    MAP_COMPLETED: (e) => (end = e),
  });
  for await (const result of job) {
    state.done++;
    if (!result.success) state.failed++;
    progress.update(state);
  }
  progress.update(state, true);
  progress.finish();
  const finished = end as MapCompletedEvent | null;
  const text = `${JSON.stringify(finished?.output ?? null)}\n`;
  if (typeof values.out === "string") await new Promise<void>((resolve) => createWriteStream(values.out as string).end(text, () => resolve()));
  else process.stdout.write(text);
  const id = await job.id();
  if (finished?.status !== "completed") {
    const err = finished?.error;
    process.stderr.write(`job ${id} ${finished?.status ?? "ended"}${err ? `: ${err.code} at ${err.stage}[${err.index}] (${err.message}); \`fanout recover ${id}\` goes on` : ""}\n`);
    return 1;
  }
  process.stderr.write(`done: ${state.done} tasks, job ${id} completed\n`);
  return 0;
}

export async function runRecover(client: Fanout, id: string, values: Flags): Promise<number> {
  const kinds = typeof values["error-kinds"] === "string" ? values["error-kinds"].split(",").map((k) => k.trim()) : undefined;
  const total = int(values.budget, "--budget");
  const answer = await client.job(id).recover({
    model: typeof values.model === "string" ? values.model : undefined,
    maxRetries: int(values["max-retries"], "--max-retries"),
    timeoutSecs: int(values.timeout, "--timeout"),
    errorKinds: kinds as never,
    tokenBudget: total === undefined ? undefined : { total },
  });
  process.stdout.write(`${answer.job_id} ${answer.status}: ${answer.recovering} tasks to run again\n`);
  return 0;
}

export async function runResume(client: Fanout, id: string, values: Flags): Promise<number> {
  const job = await client.job(id).resume(int(values.budget, "--budget"));
  process.stdout.write(`${job.id} ${job.status}\n`);
  return 0;
}
