/**
 * The `fanout` commands of v2: `reduce`, `map-reduce`, `estimate`, `recover` and `resume`. Each takes the
 * parsed flags and a client, writes to stdout/stderr, and returns the exit code.
 */
import { createWriteStream, readFileSync } from "node:fs";
import type { Fanout, JobHandle } from "./index.js";
import { costText, Progress, trackBatches, trackConcurrency, trackPacing, type ProgressState } from "./progress.js";
import { eventStream } from "./sse.js";
import type { MapCompletedEvent, MapReduceOptions, ReduceOptions, TaskResult } from "./types.js";

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

/** `--budget TOKENS` and/or `--budget-usd DOLLARS`. */
export function budgetFlag(values: Flags) {
  const total = int(values.budget, "--budget");
  const usd = dollars(values["budget-usd"]);
  if (total === undefined && usd === undefined) return undefined;
  const onExhausted = values["on-exhausted"];
  if (onExhausted !== undefined && onExhausted !== "pause" && onExhausted !== "fail") throw new UsageError("--on-exhausted is pause or fail");
  return { total, usd, onExhausted: onExhausted as "pause" | "fail" | undefined };
}

function dollars(value: string | boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== "string" || !(n > 0)) throw new UsageError("--budget-usd takes a number of dollars above 0");
  return n;
}

/** `--mode realtime|batch|auto [--deadline SECS]` (map, filter, classify, map-reduce). */
export function executionFlag(values: Flags) {
  const mode = values.mode;
  if (mode === undefined) return values.deadline === undefined ? {} : usageError("--deadline needs --mode auto");
  if (mode !== "realtime" && mode !== "batch" && mode !== "auto") throw new UsageError("--mode is realtime, batch or auto");
  return { execution: { mode, deadlineSecs: int(values.deadline, "--deadline") } as const };
}

function usageError(message: string): never {
  throw new UsageError(message);
}

/** `--cache TTL_SECS`: the response cache for the job's calls. */
export function cacheFlag(values: Flags) {
  const ttlSecs = int(values.cache, "--cache");
  return ttlSecs === undefined ? undefined : { ttlSecs };
}

/** The flags every job-creating command takes (map, reduce, filter, classify). */
export function jobFlags(values: Flags) {
  return {
    concurrency: int(values.concurrency, "--concurrency"),
    maxRetries: int(values["max-retries"], "--max-retries"),
    timeoutSecs: int(values.timeout, "--timeout"),
    systemPrompt: typeof values.system === "string" ? values.system : undefined,
    tokenBudget: budgetFlag(values),
    cache: cacheFlag(values),
  };
}

/** A fold's options from flags: `--input` is a JSON list or object (named inputs), JSONL or CSV. */
export function reduceOptions(values: Flags, inputs: unknown[] | Record<string, unknown>): ReduceOptions {
  const initial = values.initial;
  return {
    inputs,
    model: need(values.model, "--model"),
    initialValue: typeof initial === "string" ? (JSON.parse(initial) as unknown) : undefined,
    innerTask:
      typeof values["inner-template"] === "string"
        ? { promptTemplate: readFileSync(values["inner-template"], "utf8"), outputSchema: jsonFile(values["inner-schema"]) }
        : undefined,
    reductionTask: { promptTemplate: readFileSync(need(values["reduction-template"], "--reduction-template"), "utf8"), outputSchema: jsonFile(values.schema) },
    ...jobFlags(values),
  };
}

const task = (template: string | boolean | undefined, schema: string | boolean | undefined) =>
  typeof template === "string" ? { promptTemplate: readFileSync(template, "utf8"), outputSchema: jsonFile(schema) } : undefined;

/** A map-reduce job's options from flags. */
export function mapReduceOptions(values: Flags, inputs: unknown[]): MapReduceOptions {
  const conflict = values.conflict;
  if (conflict !== undefined && conflict !== "first" && conflict !== "most_frequent" && conflict !== "highest_confidence") {
    throw new UsageError("--conflict is first, most_frequent or highest_confidence");
  }
  const budget = budgetFlag(values);
  return {
    inputs,
    model: need(values.model, "--model"),
    mapper: task(need(values["mapper-template"], "--mapper-template"), values["mapper-schema"]) as MapReduceOptions["mapper"],
    reducer: task(need(values["reducer-template"], "--reducer-template"), values.schema) as MapReduceOptions["reducer"],
    synthesis: task(values["synthesis-template"], values["synthesis-schema"]),
    docsPerMapper: int(values["docs-per-mapper"], "--docs-per-mapper"),
    maxParallelMappers: int(values.concurrency, "--concurrency"),
    reductionStrategy: values.strategy as MapReduceOptions["reductionStrategy"],
    fanIn: int(values["fan-in"], "--fan-in"),
    shuffle: {
      key: typeof values["shuffle-key"] === "string" ? values["shuffle-key"] : undefined,
      dedupeFields: typeof values["dedupe-fields"] === "string" ? values["dedupe-fields"].split(",").map((f) => f.trim()) : undefined,
      conflict: conflict as "first" | "most_frequent" | "highest_confidence" | undefined,
    },
    mapFailures: values["map-failures"] === "continue" ? "continue" : undefined,
    maxRetries: int(values["max-retries"], "--max-retries"),
    timeoutSecs: int(values.timeout, "--timeout"),
    tokenBudget: budget,
    cache: cacheFlag(values),
    ...executionFlag(values),
  };
}

/** Runs a map-reduce job with progress (and each stage as it starts and ends) on stderr; the output goes to stdout or --out. */
export function runMapReduce(client: Fanout, values: Flags, inputs: unknown[]): Promise<number> {
  const job = client.mapReduce(mapReduceOptions(values, inputs));
  job.on({
    STAGE_STARTED: (e) => process.stderr.write(`stage ${e.stage}: started, ${e.total} tasks\n`),
    STAGE_COMPLETED: (e) => process.stderr.write(`stage ${e.stage}: done, ${e.succeeded} succeeded, ${e.failed} failed\n`),
  });
  return followStaged(job, values);
}

/** Runs a fold with progress on stderr; the final accumulator goes to stdout (or --out) as JSON. */
export function runReduce(client: Fanout, values: Flags, inputs: unknown[] | Record<string, unknown>): Promise<number> {
  return followStaged(client.reduce(reduceOptions(values, inputs)), values);
}

/** Follows a staged job to its end with a progress bar; prints its output; exit 1 unless it completed. */
export async function followStaged(job: JobHandle<TaskResult>, values: Flags): Promise<number> {
  const progress = new Progress();
  const state: ProgressState = { done: 0, failed: 0, total: 0 };
  trackConcurrency(job, state, progress);
  trackPacing(job, state, progress);
  trackBatches(job);
  let end: MapCompletedEvent | null = null;
  const totals = new Map<string, number>(); // each stage's size: planned, then as each stage starts
  const count = () => (state.total = [...totals.values()].reduce((a, b) => a + b, 0));
  job.on({
    MAP_STARTED: (e) => {
      for (const s of e.stages ?? []) totals.set(s.name, s.total);
      count();
    },
    STAGE_STARTED: (e) => {
      totals.set(e.stage, e.total);
      count();
    },
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
    process.stderr.write(
      `job ${id} ${finished?.status ?? "ended"}${err ? `: ${err.code} at ${err.stage}[${err.index}] (${err.message}); \`fanout recover ${id}\` goes on` : ""}\n`,
    );
    return 1;
  }
  process.stderr.write(`done: ${state.done} tasks${costText(finished.cost_usd)}, job ${id} completed\n`);
  return 0;
}

const ENDED = new Set(["completed", "cancelled", "failed"]);

/**
 * Re-runs an ended job's failed and unfinished tasks and follows that round like `map` does:
 * progress on stderr, a last line with what it did; exit 1 unless the round ended completed with
 * nothing failed. The stream is read to its end first, so the round's events are told from the
 * earlier rounds' (same job, same stream).
 */
export async function runRecover(client: Fanout, id: string, values: Flags): Promise<number> {
  const kinds = typeof values["error-kinds"] === "string" ? values["error-kinds"].split(",").map((k) => k.trim()) : undefined;
  const total = int(values.budget, "--budget");
  const open = (last: number) => client.openEvents(id, last);
  let before = 0;
  if (ENDED.has((await client.job(id).status()).status)) for await (const event of eventStream({ open, until: "MAP_COMPLETED" })) before = event.id;
  const answer = await client.job(id).recover({
    model: typeof values.model === "string" ? values.model : undefined,
    maxRetries: int(values["max-retries"], "--max-retries"),
    timeoutSecs: int(values.timeout, "--timeout"),
    errorKinds: kinds as never,
    tokenBudget: total === undefined ? undefined : { total },
  });
  process.stdout.write(`${answer.job_id} ${answer.status}: ${answer.recovering} tasks to run again\n`);
  const progress = new Progress();
  const state: ProgressState = { done: 0, failed: 0, total: answer.recovering };
  let end: MapCompletedEvent | null = null;
  progress.update(state, true);
  for await (const event of eventStream({ open, until: "MAP_COMPLETED", after: before })) {
    if (event.event === "MAP_ITEM_COMPLETED" || event.event === "TASK_COMPLETED") {
      state.done++;
      state.total = Math.max(state.total, state.done); // a staged job's later stages run again too
      if (!(event.data as { success: boolean }).success) state.failed++;
      progress.update(state);
    } else if (event.event === "CONCURRENCY_CHANGED") {
      const data = event.data as { effective_concurrency: number; reason: string };
      state.concurrency = { calls: data.effective_concurrency, reason: data.reason };
      progress.update(state, true);
    } else if (event.event === "MAP_COMPLETED") end = event.data as MapCompletedEvent;
  }
  progress.update(state, true);
  progress.finish();
  const ended = end as MapCompletedEvent | null;
  process.stderr.write(
    `${ended?.failed ? "done with failures" : "done"}: ${state.done} tasks re-run, job ${id} ${ended?.status ?? "ended"}, ${ended?.succeeded ?? 0} succeeded and ${ended?.failed ?? 0} failed in all\n`,
  );
  return ended?.status === "completed" && !ended.failed ? 0 : 1;
}

export async function runResume(client: Fanout, id: string, values: Flags): Promise<number> {
  const job = await client.job(id).resume(int(values.budget, "--budget"));
  process.stdout.write(`${job.id} ${job.status}\n`);
  return 0;
}
